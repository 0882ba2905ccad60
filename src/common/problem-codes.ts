/**
 * What is wrong, for programs: the one vocabulary of every admin refusal, whichever door it came
 * through. A mistake has one code: a bad ZIP code is `bad_zip` in a PUT's body and on a line of
 * the store CSV, a missing name `empty` in both. The OpenAPI document's enum of `code`
 * (AdminProblemCode) is this list, so a code is part of the API: renaming a check does not change
 * it. A check says its code itself (ValidateProblems, in validators.ts); class-validator's own
 * checks are named in CHECK_CODES below.
 */
export const PROBLEM_CODES = [
  // A value is missing: left out, null, empty, or only white space (or a list without an entry).
  'empty',
  'too_long',
  'too_short',
  // Text with an unpaired surrogate.
  'not_unicode',
  // A value of the wrong JSON type: a number where text belongs, and the like.
  'not_string',
  'not_list',
  'not_object',
  // A field the request does not take.
  'unknown_field',
  // A list with more entries than it may have, or one entry twice.
  'too_many',
  'duplicate',
  'bad_integer',
  // A query flag other than `true` or `false`.
  'bad_flag',
  // The export's `columns`: not a list of known columns, each once.
  'bad_columns',
  // A team that is not a lowercase slug; a token scope that is none of read, write, admin.
  'bad_team',
  'bad_scope',
  'bad_state',
  'bad_zip',
  // A well-formed ZIP code that no source knows, on a store without coordinates.
  'unknown_zip',
  'bad_coordinate',
  'bad_hours',
  'bad_time_zone',
  'bad_special_hours',
  'bad_closure',
  // A store's contact fields: not a US phone number, not an https address, not an email address.
  'bad_phone',
  'bad_website',
  'bad_email',
  // A store's services name one the chain does not have (GET /admin/services), or that is no slug.
  'unknown_service',
  // A store's code with white space around it (the path of a PUT).
  'white_space',
  // The store CSV's own: the file has no header row, or not the one the import takes.
  'bad_header',
  // The file is not CSV (a broken quote, …): the line where the reader gave up.
  'bad_csv',
  // A row with more or fewer fields than the header.
  'field_count',
  // A code that an earlier line of the file already has.
  'duplicate_code',
  // A check without a code of its own: none of the admin routes' (problem-codes.spec.ts keeps it so).
  'invalid',
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

/**
 * The codes of class-validator's own checks, by the name it gives them. The service's own checks
 * carry their codes (ValidateProblems) and are not listed here; nor is an unknown field
 * (class-validator's `whitelistValidation`), which validation.ts answers as `unknown_field`.
 */
export const CHECK_CODES: Readonly<Partial<Record<string, ProblemCode>>> = {
  isString: 'not_string',
  isArray: 'not_list',
  isObject: 'not_object',
  nestedValidation: 'not_object',
  arrayMinSize: 'empty',
  arrayMaxSize: 'too_many',
  arrayUnique: 'duplicate',
};
