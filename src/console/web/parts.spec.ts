import { fieldErrors } from './parts.js';

// The console shows the API's texts as they are; these only decide where each goes.
describe('console: placing the API problems', () => {
  const FIELDS = ['name', 'state', 'zip', 'lat', 'special_hours'];

  it('puts each problem next to the field it names (a path under its field), the rest above the form', () => {
    const problems = [
      { field: 'state', code: 'bad_state', message: '"XX" is not a US state or territory code' },
      { field: 'code', code: 'white_space', message: 'has white space around it' },
      { field: 'special_hours[1].date', code: 'bad_special_hours', message: '"2026-13-01" is not a calendar date from 2000 to 2199' },
      { field: 'special_hours[2].hours', code: 'bad_special_hours', message: '"9 to 5" is not a time range' },
    ];
    expect(fieldErrors({ message: 'ignored when there are problems', problems }, FIELDS)).toEqual({
      state: 'state: "XX" is not a US state or territory code',
      '': 'code: has white space around it',
      special_hours: 'special_hours[1].date: "2026-13-01" is not a calendar date from 2000 to 2199; special_hours[2].hours: "9 to 5" is not a time range',
    });
  });

  it('shows a refusal without problems by its message, above the form', () => {
    expect(fieldErrors({ message: 'request body is not valid JSON', problems: [] }, FIELDS)).toEqual({ '': 'request body is not valid JSON' });
  });
});
