import { getMetadataStorage } from 'class-validator';
import { ExportQuery, ImportQuery, ListStoresQuery, StoreRequest } from '../stores/dto/admin-store.dto.js';
import { HolidayRequest } from '../stores/dto/admin-holiday.dto.js';
import { ServiceRequest } from '../stores/dto/admin-service.dto.js';
import { CreateTokenRequest, ListTokensQuery, RotateTokenRequest } from '../tokens/dto/admin-token.dto.js';
import { CHECK_CODES, PROBLEM_CODES } from './problem-codes.js';
import type { ProblemsContext } from './validators.js';

/** Every request and query the admin routes that answer problems take. */
const ADMIN_REQUESTS = [
  StoreRequest,
  ListStoresQuery,
  ExportQuery,
  ImportQuery,
  HolidayRequest,
  ServiceRequest,
  CreateTokenRequest,
  RotateTokenRequest,
  ListTokensQuery,
];

describe('problem codes', () => {
  it('are snake_case, each once', () => {
    for (const code of PROBLEM_CODES) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(new Set(PROBLEM_CODES).size).toBe(PROBLEM_CODES.length);
    for (const code of Object.values(CHECK_CODES)) expect(PROBLEM_CODES).toContain(code);
  });

  it.each(ADMIN_REQUESTS)("%p: each check of an admin request has a code of its own, whatever class-validator's name for it", (request) => {
    const storage = getMetadataStorage();
    const checks = storage.getTargetValidationMetadatas(request, '', false, false).filter((rule) => rule.type !== 'conditionalValidation');
    expect(checks.length).toBeGreaterThan(0);
    for (const rule of checks) {
      const name = rule.type === 'customValidation' ? storage.getTargetValidatorConstraints(rule.constraintCls)[0].name : rule.type;
      const own = typeof (rule.context as Partial<ProblemsContext> | undefined)?.problemsOf === 'function';
      expect({ property: rule.propertyName, name, coded: own || CHECK_CODES[name] !== undefined }).toEqual({ property: rule.propertyName, name, coded: true });
    }
  });
});
