// The spreadsheet-formula guard of the store CSV: the export, the import and the console
// (bundled for the browser) share these two functions.

const FORMULA_START = /^'*[=+\-@\t\r]/;
const GUARDED = /^'+[=+\-@\t\r]/;

/**
 * The export's cell for a free-text value: a `'` before a value that would start a formula (the
 * usual guard, which spreadsheets show as text and hide), and before one that already starts
 * with `'`s and then such a character, so that unguardCell gives every value back exactly.
 */
export function guardCell(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** The import's reading of a free-text cell: one leading `'` before `'`s and = + - @ TAB CR is the export's guard. */
export function unguardCell(value: string): string {
  return GUARDED.test(value) ? value.slice(1) : value;
}
