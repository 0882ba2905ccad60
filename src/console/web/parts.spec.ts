import { fieldErrors } from './parts.js';

// The console shows the API's texts as they are; these only decide where each part goes.
describe('console: placing the API texts', () => {
  const FIELDS = ['name', 'state', 'zip', 'lat'];

  it('puts each part of a 400 next to the field it names, the rest above the form', () => {
    expect(fieldErrors('state: "XX" is not a US state or territory code; zip: "1" is not a ZIP code like 12345 or 12345-6789', FIELDS)).toEqual({
      state: 'state: "XX" is not a US state or territory code',
      zip: 'zip: "1" is not a ZIP code like 12345 or 12345-6789',
    });
    expect(fieldErrors('name must be a string', FIELDS)).toEqual({ name: 'name must be a string' });
    expect(fieldErrors('code: has white space around it; lat: must be a number', FIELDS)).toEqual({
      '': 'code: has white space around it',
      lat: 'lat: must be a number',
    });
    expect(fieldErrors('request body is not valid JSON', FIELDS)).toEqual({ '': 'request body is not valid JSON' });
  });
});
