import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiSchema, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, ValidateIf } from 'class-validator';
import { PROBLEM_CODES, type ProblemCode } from '../../common/problem-codes.js';
import { ValidateField, ValidateInteger, ValidateProblems, ValidateText, type FieldOptions } from '../../common/validators.js';
import { ValidateUsState } from '../../geo/validate-us-state.js';
import { ROW_WARNING_CODES, formatProblem, type RowProblem, type RowWarning, type RowWarningCode } from '../store-csv.js';
import { MAX_LISTED_PROBLEMS } from '../store-csv-reader.js';
import { MAX_LISTED_CHANGES, type ImportSummary } from '../store-import-plan.js';
import {
  NULLABLE_VIEW_FIELDS,
  STORE_CODE_LENGTH,
  STORE_FIELD_NAMES,
  STORE_FIELDS,
  storeFieldText,
  type StoreFields,
  type StoreViewFields,
  type StoreFieldName,
} from '../../shared/store-fields.js';
import type { Store } from '../store.entity.js';
import { SERVICE_SLUG, SERVICE_SLUG_RULE, SERVICES_SEPARATOR, servicesOf } from '../../shared/services.js';
import {
  closureProblems,
  closureText,
  parseClosure,
  parseSpecialDays,
  specialDaysProblems,
  specialDaysText,
  SPECIAL_DAYS_MAX,
  type Closure,
  type PathProblem,
  type SpecialDay,
} from '../../shared/special-days.js';

type NullableField = (typeof NULLABLE_VIEW_FIELDS)[number];
/** The contact fields as the request takes them (null clears) and the view answers them (null: none). */
type NullableRequest = { [N in NullableField]?: string | null };
type NullableView = { [N in NullableField]: string | null };

/**
 * Text as a CSV field holds it; the rules of a store row (store-csv.ts) check it afterwards, with
 * the import's messages and codes. A field left out (or null) is an empty cell to those rules, so
 * that a missing name is `empty` here as on a line of the file.
 */
const Field = (options: FieldOptions) =>
  ValidateField(
    { type: 'string', ...options },
    ValidateIf((_, value) => value !== undefined && value !== null),
    IsString({ message: ({ property }) => `${property} must be a string` }),
  );

@ApiSchema({ name: 'AdminSpecialDay', description: "A day whose hours differ from the weekday's, in the store's own calendar." })
export class SpecialDayView {
  @ApiProperty({ description: "The date, YYYY-MM-DD, in the store's time zone.", format: 'date', example: '2026-12-24' }) date: string;
  @ApiProperty({
    description: 'Its hours: `Closed`, or ranges as the weekly hours (`12:00 AM` as a close is midnight at its end).',
    example: '9:00 AM - 2:00 PM',
  })
  hours: string;
}

/**
 * A temporary closure or null, written out in place: OpenAPI 3.0 cannot make a reference to a
 * schema nullable (`nullable` beside `allOf` still refuses null in the referenced object).
 */
export const CLOSURE_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  nullable: true,
  additionalProperties: false,
  required: ['from', 'until'],
  properties: {
    from: { type: 'string', format: 'date', description: "The first day closed, in the store's calendar.", example: '2027-01-04' },
    until: {
      type: 'string',
      format: 'date',
      nullable: true,
      description: 'The last day closed, not before `from`; null: until further notice.',
      example: '2027-01-31',
    },
  },
};

/**
 * A field the admin API takes as JSON and the CSV as text (special days, a closure): checked with
 * every problem named by its path (`special_hours[1].date`, 0-based). `null` is a value here, not
 * "left out": as in JSON Merge Patch it clears the field, where leaving the field out keeps it.
 */
function JsonField(schema: FieldOptions, code: ProblemCode, problemsOf: (value: unknown) => PathProblem[]): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional(schema),
    ValidateIf((_, value) => value !== undefined),
    ValidateProblems('isStoreJson', (value) => problemsOf(value).map(({ path, reason }) => ({ path, code, reason }))),
  );
}

/**
 * A text field that `null` clears (a contact field): unlike an optional field of ValidateField, whose
 * `null` means "left out", and so "kept as stored" here. Checked afterwards as a CSV cell, empty for null.
 */
const ClearableField = ({ optional: _optional, ...options }: FieldOptions) =>
  applyDecorators(
    ApiPropertyOptional({ type: 'string', nullable: true, ...options }),
    ValidateIf((_, value) => value !== undefined && value !== null),
    IsString({ message: ({ property }) => `${property} must be a string` }),
  );
const NULLABLE = new Set<string>(NULLABLE_VIEW_FIELDS);

/*
 * The request's and the view's properties are the table's (store-fields.ts), each field's check and
 * schema in the CSV's order: the classes carry the decorators (Nest validates and documents by
 * class), an interface of the same name their types.
 */
/* eslint-disable @typescript-eslint/no-unsafe-declaration-merging */
@ApiSchema({
  name: 'AdminStoreRequest',
  description:
    'A store, field by field as a row of the store CSV (the code is in the path). Checked as an import checks a row. `special_hours`, `temporarily_closed`, `phone`, `website`, `email` and `services` left out stay as stored (`[]` and `null` clear them), so that a client written before them loses nothing.',
})
export class StoreRequest {}
export interface StoreRequest extends Omit<StoreFields, 'special_hours' | 'temporarily_closed' | 'services' | NullableField>, NullableRequest {
  special_hours?: SpecialDay[] | null;
  temporarily_closed?: Closure | null;
  services?: string[] | null;
}

/** A list of services as the admin API takes it: a list of slugs (whether the chain has them is the row's check, store-csv.ts). */
function servicesProblems(value: unknown): PathProblem[] {
  if (!Array.isArray(value)) return [{ path: '', reason: 'must be a list of service slugs' }];
  const at = value.findIndex((slug) => typeof slug !== 'string' || !SERVICE_SLUG.test(slug));
  return at < 0 ? [] : [{ path: `[${at}]`, reason: `${JSON.stringify(value[at])} ${SERVICE_SLUG_RULE}` }];
}
const JSON_FIELDS: Record<string, PropertyDecorator> = {
  special_hours: JsonField(
    {
      type: [SpecialDayView],
      description: `Days whose hours differ from the weekday's (a holiday's included), at most ${SPECIAL_DAYS_MAX}, each date once; answered by date. Left out: kept as stored; \`[]\` or \`null\` clears.`,
      example: [
        { date: '2026-12-24', hours: '9:00 AM - 2:00 PM' },
        { date: '2026-12-26', hours: 'Closed' },
      ],
    },
    'bad_special_hours',
    (value) => (value === null ? [] : specialDaysProblems(value)),
  ),
  temporarily_closed: JsonField(
    {
      ...CLOSURE_SCHEMA,
      description: 'A temporary closure: closed whatever the hours say. Left out: kept as stored; `null` clears.',
      example: null,
    },
    'bad_closure',
    closureProblems,
  ),
  services: JsonField(
    {
      type: [String],
      description:
        'The services of the chain (`GET /admin/services`) the store offers, by slug; answered sorted, each once. A slug the chain does not have is a 400 naming it. Left out: kept as stored; `[]` or `null` clears.',
      example: ['curbside_pickup', 'delivery'],
    },
    'unknown_service',
    (value) => (value === null ? [] : servicesProblems(value)),
  ),
};
for (const field of STORE_FIELDS) {
  if ('request' in field) (JSON_FIELDS[field.name] ?? (NULLABLE.has(field.name) ? ClearableField : Field)(field.request))(StoreRequest.prototype, field.name);
}

/** A request's fields as the store services take them: the JSON fields in their text form, null as empty (it clears), left out when left out. */
export function storeFields(request: StoreRequest): StoreFields {
  const { special_hours, temporarily_closed, services, ...rest } = request;
  for (const name of NULLABLE_VIEW_FIELDS) if (rest[name] === null) rest[name] = '';
  return {
    ...(rest as StoreFields),
    ...(services !== undefined && { services: (services ?? []).join(SERVICES_SEPARATOR) }),
    ...(special_hours !== undefined && { special_hours: specialDaysText(special_hours ?? []) }),
    ...(temporarily_closed !== undefined && { temporarily_closed: closureText(temporarily_closed) }),
  };
}

@ApiSchema({ name: 'AdminStore', description: 'A store as stored: what searches answer with, and its code.' })
export class StoreView {}
export interface StoreView extends Omit<StoreViewFields, 'special_hours' | 'temporarily_closed' | 'services' | NullableField>, NullableView {
  special_hours: SpecialDay[];
  temporarily_closed: Closure | null;
  services: string[];
  updated_at: string;
}
for (const { name, view } of STORE_FIELDS) {
  if (name === 'special_hours') ApiProperty({ type: [SpecialDayView], description: 'Special days, by date; empty when none.' })(StoreView.prototype, name);
  else if (name === 'temporarily_closed') ApiProperty({ ...CLOSURE_SCHEMA, description: 'A temporary closure, or null.' })(StoreView.prototype, name);
  else if (name === 'services')
    ApiProperty({ type: [String], description: "The store's services, by slug, sorted; empty when none.", example: ['curbside_pickup', 'delivery'] })(
      StoreView.prototype,
      name,
    );
  else ApiProperty({ type: String, ...(NULLABLE.has(name) && { nullable: true }), ...view })(StoreView.prototype, name);
}
/* eslint-enable @typescript-eslint/no-unsafe-declaration-merging */
ApiProperty({ type: String, description: 'When it last changed (ISO 8601, UTC).', format: 'date-time', example: '2026-11-24T10:00:00.000Z' })(
  StoreView.prototype,
  'updated_at',
);

@ApiSchema({ name: 'AdminStoreWarning', description: 'A warning of the check of a store that was written all the same, as data.' })
export class StoreWarningView {
  @ApiProperty({ description: 'The field it is about.', example: 'lat' }) field: string;
  @ApiProperty({ description: 'What it is, for programs.', enum: ROW_WARNING_CODES, enumName: 'AdminStoreWarningCode', example: 'far_from_zip' })
  code: RowWarningCode;
  @ApiProperty({ description: 'What it is, in words (after the field).', example: 'is more than 100 miles from ZIP 10001' }) message: string;
}

@ApiSchema({ name: 'AdminStoreWritten', description: 'The store as stored, and the warnings of its check (coordinates far from the ZIP code).' })
export class StoreWrittenView extends StoreView {
  @ApiProperty({ description: 'Warnings in words, e.g. `lat: is more than 100 miles from ZIP 10001`; empty when none.', type: [String], example: [] })
  warnings: string[];
  @ApiProperty({ description: 'The same warnings as data, in the same order.', type: [StoreWarningView], example: [] })
  warning_details: StoreWarningView[];
}

/** The written store with its warnings, in words and as data. */
export function storeWrittenView(store: Store, warnings: RowWarning[]): StoreWrittenView {
  return {
    ...storeView(store),
    warnings: warnings.map((w) => `${w.column}: ${w.reason}`),
    warning_details: warnings.map((w) => ({ field: w.column, code: w.code, message: w.reason })),
  };
}

export class ListStoresQuery {
  @ValidateInteger({ optional: true, query: true, minimum: 1, maximum: 1000, description: 'Maximum number of stores to return: 1 to 1000. Default: 100.' })
  limit: number = 100;

  @ValidateText({
    optional: true,
    maxLength: STORE_CODE_LENGTH,
    description: 'Cursor: only stores whose code sorts after this one. The `Link` header of a page gives the next one.',
  })
  after?: string;

  @ValidateUsState({ optional: true, description: 'Only the stores of this state or territory (two letters, any case).', example: 'NY' })
  state?: string;

  @ValidateText({
    optional: true,
    minLength: 1,
    maxLength: 100,
    description: 'Only the stores whose code, name, address, city or ZIP contains this text (ignoring case).',
    example: 'chelsea',
  })
  q?: string;
}

/** A query flag: `true` or `false`, nothing else ("1", "yes" and a repeated parameter are refused). */
const QueryFlag = (description: string) =>
  ValidateField(
    { type: 'boolean', optional: true, description },
    Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value)),
    ValidateProblems('isFlag', (value) => (typeof value === 'boolean' ? [] : [{ code: 'bad_flag', reason: 'must be true or false' }])),
  );

export class ExportQuery {
  @ValidateField(
    {
      type: 'string',
      optional: true,
      description: `Only these columns, comma-separated, in this order (each once): some of ${STORE_FIELD_NAMES.join(', ')}. Default: all, the format the import takes.`,
      example: 'code,lat,lng',
    },
    ValidateProblems('isColumnList', (value) =>
      parseColumns(value) !== undefined
        ? []
        : [{ code: 'bad_columns', reason: `must be a comma-separated list of ${STORE_FIELD_NAMES.join(', ')}, each at most once` }],
    ),
  )
  columns?: string;
}

/** `columns` as the export takes it, or undefined when it is not a list of known, distinct columns. */
export function parseColumns(value: unknown): StoreFieldName[] | undefined {
  if (typeof value !== 'string') return undefined;
  const columns = value.split(',');
  const known = new Set<string>(STORE_FIELD_NAMES);
  return columns.every((column) => known.has(column)) && new Set(columns).size === columns.length ? (columns as StoreFieldName[]) : undefined;
}

export class ImportQuery {
  @QueryFlag('Check and report, write nothing. Default: false.')
  dry_run?: boolean;

  @QueryFlag('Also delete the stores whose code is not in the file (only once the whole file is valid). Default: false.')
  prune?: boolean;

  @ValidateInteger({
    optional: true,
    query: true,
    minimum: 0,
    maximum: 100_000_000,
    description:
      'With `prune`: the number of stores the caller expects to be removed, as its dry run reported. It must match, and it is required when `prune` would remove more than `STORE_IMPORT_MAX_PRUNE_PERCENT` (10 %) of the catalogue; otherwise 409 and nothing is written. Ignored by a dry run. (No example: Swagger UI would send it with every try.)',
  })
  expected_removals?: number;
}

@ApiSchema({
  name: 'AdminStoreFieldChange',
  description: "One field of a store that an import changes: the stored value and the file's, as text (coordinates with six decimals).",
})
export class FieldChangeView {
  @ApiProperty({ description: 'The CSV column.', enum: STORE_FIELD_NAMES.filter((column) => column !== 'code'), example: 'name' }) field: string;
  @ApiProperty({ description: 'The value stored now.', example: 'Fern & Fig Chelsea' }) old: string;
  @ApiProperty({ description: 'The value of the file.', example: 'Fern & Fig West Chelsea' }) new: string;
}

@ApiSchema({
  name: 'AdminStoreImportChange',
  description: "One store an import adds, updates or removes. Adds and updates carry the file's line; removals (by `prune`) have none.",
})
export class StoreChangeView {
  @ApiProperty({ description: 'What happens to the store.', enum: ['add', 'update', 'remove'], example: 'update' }) change: 'add' | 'update' | 'remove';
  @ApiProperty({ description: 'The line of the file the store is on (adds and updates).', type: 'integer', required: false, example: 7 }) line?: number;
  @ApiProperty({ description: "The store's code.", example: 'NY-0042' }) code: string;
  @ApiProperty({ description: "The store's name (the file's for adds and updates, the stored one for removals).", example: 'Fern & Fig West Chelsea' })
  name: string;
  @ApiProperty({ description: 'City (adds and removals).', required: false, example: 'New York' }) city?: string;
  @ApiProperty({ description: 'State (adds and removals).', required: false, example: 'NY' }) state?: string;
  @ApiProperty({ description: "The fields that change (updates), in the CSV's order.", type: [FieldChangeView], required: false }) fields?: FieldChangeView[];
}

@ApiSchema({
  name: 'AdminStoreImportProblem',
  description: "A line of the file the import refuses, and why: the parts of one line of the 422's message, as data.",
})
export class ImportProblemView {
  @ApiProperty({ description: 'The line of the file (the header is line 1).', type: 'integer', example: 3 }) line: number;
  @ApiProperty({ description: 'The CSV column, or null when the problem is the whole line or file.', type: 'string', nullable: true, example: 'state' })
  column: string | null;
  @ApiProperty({
    description: 'What is wrong, for programs: the code a PUT of the same fields answers.',
    enum: PROBLEM_CODES,
    enumName: 'AdminProblemCode',
    example: 'bad_state',
  })
  code: ProblemCode;
  @ApiProperty({ description: 'What is wrong, in the words of the 422 (after the column).', example: '"XX" is not a US state or territory code' })
  message: string;
}

@ApiSchema({
  name: 'AdminStoreImportWarning',
  description: 'A line the import takes all the same, and why it warns: the parts of one line of `warnings`, as data.',
})
export class ImportWarningView {
  @ApiProperty({ description: 'The line of the file (the header is line 1).', type: 'integer', example: 3 }) line: number;
  @ApiProperty({ description: 'The CSV column.', example: 'lat' }) column: string;
  @ApiProperty({ description: 'What it is, for programs.', enum: ROW_WARNING_CODES, enumName: 'AdminStoreWarningCode', example: 'far_from_zip' })
  code: RowWarningCode;
  @ApiProperty({ description: 'What it is, in words (after the column).', example: 'is more than 100 miles from ZIP 10001' }) message: string;
}

@ApiSchema({ name: 'AdminStoreImport', description: 'What an import did (or, in a dry run, would do).' })
export class ImportView {
  @ApiProperty({ description: 'Rows read (the header not counted).', type: 'integer', example: 391 }) read: number;
  @ApiProperty({ description: 'Stores added.', type: 'integer', example: 3 }) inserted: number;
  @ApiProperty({ description: 'Stores changed.', type: 'integer', example: 5 }) updated: number;
  @ApiProperty({ description: 'Rows equal to the stored store.', type: 'integer', example: 383 }) unchanged: number;
  @ApiProperty({ description: 'Stores deleted by `prune`.', type: 'integer', example: 0 }) pruned: number;
  @ApiProperty({ description: 'Whether nothing was written (`dry_run`).', example: false }) dry_run: boolean;
  @ApiProperty({
    description: `Warnings in words, by line (the first ${MAX_LISTED_PROBLEMS}), e.g. \`line 3, lat: is more than 100 miles from ZIP 10001\`: rows taken all the same.`,
    type: [String],
    example: [],
  })
  warnings: string[];
  @ApiProperty({ description: 'The same warnings as data, in the same order.', type: [ImportWarningView], example: [] }) warning_details: ImportWarningView[];
  @ApiProperty({ description: 'How many warnings the file has (`warnings` lists the first ones).', type: 'integer', example: 0 }) warning_count: number;
  @ApiProperty({
    description:
      "The store catalogue's version this answer holds for: the one a dry run was computed against, or the one an apply left. The same as the `ETag` header.",
    type: 'integer',
    example: 42,
  })
  version: number;
  @ApiProperty({ description: 'Stores in the catalogue before the import.', type: 'integer', example: 391 }) catalog_size: number;
  @ApiProperty({
    description: `The stores added, updated (each changed field, old and new) and removed: the file's adds and updates in its order, then the removals; at most ${MAX_LISTED_CHANGES}.`,
    type: [StoreChangeView],
  })
  changes: StoreChangeView[];
  @ApiProperty({ description: `Whether \`changes\` was cut at ${MAX_LISTED_CHANGES} entries; the counts are exact either way.`, example: false })
  changes_truncated: boolean;
  @ApiProperty({
    description: 'Whether `pruned` is more than `STORE_IMPORT_MAX_PRUNE_PERCENT` of the catalogue, so that an apply must state `expected_removals`.',
    example: false,
  })
  removals_need_confirmation: boolean;
  @ApiProperty({
    description: `Only a dry run sent with \`Prefer: handling=lenient\` lists problems: the lines an apply of this file would refuse with 422, the first ${MAX_LISTED_PROBLEMS}, in the file's order. When there are any, nothing was planned (the counts other than \`read\` are 0, \`changes\` is empty). Empty otherwise.`,
    type: [ImportProblemView],
  })
  problems: ImportProblemView[];
  @ApiProperty({ description: 'How many problems the file has (`problems` lists the first ones).', type: 'integer', example: 0 }) problem_count: number;
}

const problemView = ({ line, column, code, reason }: RowProblem): ImportProblemView => ({ line, column: column ?? null, code, message: reason });

export function importView(summary: ImportSummary, dryRun: boolean): ImportView {
  return {
    read: summary.read,
    inserted: summary.inserted,
    updated: summary.updated,
    unchanged: summary.unchanged,
    pruned: summary.pruned,
    dry_run: dryRun,
    warnings: summary.warnings.map(formatProblem),
    warning_details: summary.warnings.map(({ line, column, code, reason }) => ({ line, column, code, message: reason })),
    warning_count: summary.warningCount,
    version: summary.version,
    catalog_size: summary.catalogSize,
    changes: summary.changes,
    changes_truncated: summary.changesTruncated,
    removals_need_confirmation: summary.removalsNeedConfirmation,
    problems: summary.problems.map(problemView),
    problem_count: summary.problemCount,
  };
}

export function storeView(store: Store): StoreView {
  const view = {} as Record<string, unknown>;
  for (const name of STORE_FIELD_NAMES) view[name] = storeFieldText(name, store[name]);
  // Stored in their checked text form; a value edited by hand into the table that does not parse shows as none.
  const special = parseSpecialDays(store.special_hours ?? '');
  view.special_hours = 'days' in special ? special.days : [];
  const closure = parseClosure(store.temporarily_closed ?? '');
  view.temporarily_closed = 'closure' in closure ? closure.closure : null;
  for (const name of NULLABLE_VIEW_FIELDS) view[name] = store[name] || null;
  view.services = servicesOf(store.services ?? '');
  view.updated_at = store.updatedAt.toISOString();
  return view as unknown as StoreView;
}
