// The seven day columns of a store, Monday first, here rather than beside the entity: the opening
// hours (opening-hours.ts) need them and are bundled into the console's browser code too, where
// the entity, and TypeORM with its decorators, must not follow them.
export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
