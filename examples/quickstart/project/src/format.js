/** "$12.05" for 1205 cents. */
export function formatPrice(cents) {
  const dollars = Math.floor(cents / 100);
  const rest = cents % 100;
  return `$${dollars}.${rest}`;
}
