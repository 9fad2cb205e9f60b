// A tiny shopping cart. Prices are in cents.

/** The sum of price × quantity over the items. */
export function total(items) {
  return items.map((item) => item.price * item.quantity).reduce((sum, line) => sum + line);
}

/** The total after a percentage discount, rounded to whole cents. */
export function applyDiscount(totalCents, percent) {
  if (percent < 0 || percent > 100) throw new RangeError(`discount out of range: ${percent}`);
  return Math.round(totalCents - totalCents * percent);
}
