import { InvalidConfiguration, validateSettings } from '../config/environment.js';
import { RouterSettings } from './router.config.js';

describe('the ROUTER settings', () => {
  const problems = (env: Record<string, string>) => {
    try {
      validateSettings(RouterSettings, env);
      return [];
    } catch (error) {
      return (error as InvalidConfiguration).problems;
    }
  };

  it('default to no engine, and take pgrouting with its database', () => {
    expect(validateSettings(RouterSettings, {})).toMatchObject({
      ROUTER: 'off',
      ROUTER_SCHEMA: 'roads',
      ROUTER_TIMEOUT_MS: 800,
      ROUTER_SNAP_MILES: 1,
      ROUTER_MAX_STORES: 100,
      ROUTER_CACHE_MB: 32,
    });
    expect(validateSettings(RouterSettings, { ROUTER_CACHE_MB: '0' })).toMatchObject({ ROUTER_CACHE_MB: 0 });
    expect(
      validateSettings(RouterSettings, { ROUTER: 'pgrouting', ROUTER_DATABASE_URL: 'postgres://router@db:5432/roads', ROUTER_SNAP_MILES: '0.25' }),
    ).toMatchObject({ ROUTER: 'pgrouting', ROUTER_SNAP_MILES: 0.25 });
  });

  it('stop start-up naming each bad one', () => {
    expect(problems({ ROUTER: 'graphhopper' }).join('\n')).toContain('ROUTER must be off, pgrouting, osrm or valhalla');
    expect(problems({ ROUTER: 'osrm' }).join('\n')).toContain('ROUTER_URL must be set for ROUTER=osrm');
    expect(problems({ ROUTER: 'valhalla', ROUTER_URL: 'ftp://x' }).join('\n')).toContain('ROUTER_URL must be set for ROUTER=valhalla');
    expect(problems({ ROUTER: 'pgrouting' }).join('\n')).toContain('ROUTER_DATABASE_URL must be set for ROUTER=pgrouting');
    expect(problems({ ROUTER: 'pgrouting', ROUTER_DATABASE_URL: 'mysql://x@db/roads' }).join('\n')).toContain('ROUTER_DATABASE_URL must be set');
    expect(problems({ ROUTER_SCHEMA: 'roads; DROP TABLE x' }).join('\n')).toContain('ROUTER_SCHEMA must be a plain lower-case name');
    expect(problems({ ROUTER_SNAP_MILES: 'one' }).join('\n')).toContain('ROUTER_SNAP_MILES');
    expect(problems({ ROUTER_SNAP_MILES: '0' }).join('\n')).toContain('ROUTER_SNAP_MILES');
    expect(problems({ ROUTER_MAX_STORES: '1001' }).join('\n')).toContain('ROUTER_MAX_STORES');
    expect(problems({ ROUTER_CACHE_MB: '1025' }).join('\n')).toContain('ROUTER_CACHE_MB');
    expect(problems({ ROUTER_CACHE_MB: '-1' }).join('\n')).toContain('ROUTER_CACHE_MB');
    expect(problems({ ROUTER_CACHE_MB: '1.5' }).join('\n')).toContain('ROUTER_CACHE_MB');
  });
});
