// The server names a bad field by its API name ("discount_pct: must be …"); the Discount Simulator
// and the promotions list show the names of their own form fields instead.
const FIELD_NAMES: [RegExp, string][] = [
  [/\bpromotion\./g, ""],
  [/\bdiscount_pct\b/g, "Discount %"],
  [/\btarget_price\b/g, "Target price"],
  [/\bstarts_on\b/g, "the start date"],
  [/\bends_on\b/g, "the end date"],
  [/\bexclude_pids\b/g, "Leave out"],
  [/\bmax_discount_pct\b/g, "Largest discount"],
  [/\btarget_units\b/g, "Units left at the end"],
  [/\bscope\.pids\b/g, "Product IDs"],
  [/\bscope\b/g, "Scope"],
  [/\bname\b(?=:)/g, "Name"],
];

/** A failed request's message in the form's words; the first letter of each part upper case. */
export function discountErrorText(e: unknown): string {
  let text = e instanceof Error ? e.message : String(e);
  for (const [re, name] of FIELD_NAMES) text = text.replace(re, name);
  return text
    .split("; ")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("; ");
}
