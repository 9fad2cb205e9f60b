/** "$12.05" for 1205 cents. */
export function formatPrice(cents) {
  return `$${(cents / 100).toFixed(2)}`;
}
