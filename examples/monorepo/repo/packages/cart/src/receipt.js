import { formatPrice } from "@shop/prices";

/** One receipt line per item: "2 × tea  $5.00", the line's price being price × quantity. */
export function receipt(items) {
  return items.map((item) => `${item.quantity} × ${item.name}  ${formatPrice(item.price)}`);
}
