import { jest } from '@jest/globals';
import { ConflictException, NotFoundException } from '@nestjs/common';
import { getRepositoryToken } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { generateToken, hashToken } from '../../src/config/token-format.js';
import { ApiToken } from '../../src/tokens/api-token.entity.js';
import { TokensModule } from '../../src/tokens/tokens.module.js';
import { TokensService } from '../../src/tokens/tokens.service.js';
import { newMediumContext, type MediumContext } from './medium.factory.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A fixed clock: lifetimes and grace periods are checked to the millisecond. */
const T0 = Date.parse('2031-05-04T10:00:00.000Z');

describe(TokensService.name, () => {
  let ctx: MediumContext;
  let sut: TokensService;
  const rows = () => ctx.dataSource.getRepository(ApiToken);
  const row = (id: number) => rows().findOneByOrFail({ id });
  /** The repository the service reads tokens through. */
  const repository = () => ctx.module.get<Repository<ApiToken>>(getRepositoryToken(ApiToken));
  const at = (time: number) => jest.spyOn(Date, 'now').mockReturnValue(time);

  beforeAll(async () => {
    // The look-up cache on, at its longest: whatever revoke and rotate change must not wait for it.
    ctx = await newMediumContext(TokensModule, { TOKEN_DEFAULT_TTL_DAYS: '90', TOKEN_CACHE_SECONDS: '5', OIDC_ISSUER: '', REDIS_URL: '' });
    sut = ctx.module.get(TokensService);
  });
  afterAll(() => ctx.close());
  afterEach(() => jest.restoreAllMocks());

  describe('create', () => {
    it('stores the digest and display prefix, never the token; write scope and TOKEN_DEFAULT_TTL_DAYS by default', async () => {
      at(T0);
      const { token, record } = await sut.create({ team: 'acme' });
      expect(record).toMatchObject({ team: 'acme', name: null, scope: 'write', prefix: token.slice(0, 10), tokenHash: hashToken(token), revokedAt: null });
      expect(record.expiresAt).toEqual(new Date(T0 + 90 * DAY));
      const stored = await row(record.id);
      expect(stored).toMatchObject({
        team: 'acme',
        name: null,
        scope: 'write',
        prefix: token.slice(0, 10),
        tokenHash: hashToken(token),
        lastUsedAt: null,
        revokedAt: null,
      });
      expect(stored.expiresAt).toEqual(new Date(T0 + 90 * DAY));
      expect(Object.values(stored)).not.toContain(token);
    });

    it('takes name, scope and a lifetime of 1 to 3650 days; team up to 63 and name up to 100 characters', async () => {
      at(T0);
      const short = await sut.create({ team: 'a', name: 'n'.repeat(100), scope: 'read', expiresInDays: 1 });
      const long = await sut.create({ team: `a${'-'.repeat(61)}z`, expiresInDays: 3650 });
      await expect(row(short.record.id)).resolves.toMatchObject({ team: 'a', name: 'n'.repeat(100), scope: 'read', expiresAt: new Date(T0 + DAY) });
      await expect(row(long.record.id)).resolves.toMatchObject({ team: `a${'-'.repeat(61)}z`, scope: 'write', expiresAt: new Date(T0 + 3650 * DAY) });
    });

    it.each<[string, Parameters<TokensService['create']>[0], string]>([
      ['a team in capitals', { team: 'Acme' }, 'team must be a lowercase slug'],
      ['a team starting with a hyphen', { team: '-acme' }, 'team must be a lowercase slug'],
      ['a team of 64 characters', { team: 'a'.repeat(64) }, 'team must be a lowercase slug'],
      ['an empty name', { team: 'acme', name: '' }, 'name must be 1 to 100 characters'],
      ['a name of 101 characters', { team: 'acme', name: 'n'.repeat(101) }, 'name must be 1 to 100 characters'],
      ['a lifetime of 0 days', { team: 'acme', expiresInDays: 0 }, 'expires-in-days must be a whole number from 1 to 3650'],
      ['a lifetime of 3651 days', { team: 'acme', expiresInDays: 3651 }, 'expires-in-days must be a whole number from 1 to 3650'],
      ['a lifetime of 1.5 days', { team: 'acme', expiresInDays: 1.5 }, 'expires-in-days must be a whole number from 1 to 3650'],
      ['an unknown scope', { team: 'acme', scope: 'owner' as 'read' }, 'scope must be read or write or admin, got "owner"'],
    ])('refuses %s and writes nothing', async (_, options, message) => {
      const count = await rows().count();
      await expect(sut.create(options)).rejects.toThrow(message);
      await expect(rows().count()).resolves.toBe(count);
    });
  });

  describe('list', () => {
    it("lists one team's tokens or everyone's, by id, revoked ones included", async () => {
      const issued: number[] = [];
      for (const team of ['list-b', 'list-a', 'list-b', 'list-a', 'list-b']) issued.push((await sut.create({ team })).record.id);
      await sut.revoke(issued[2]);

      const listB = await sut.list('list-b');
      expect(listB.map((t) => t.id)).toEqual([issued[0], issued[2], issued[4]]);
      expect(listB[1].revokedAt).not.toBeNull();
      await expect(sut.list('list-a')).resolves.toMatchObject([{ id: issued[1] }, { id: issued[3] }]);
      await expect(sut.list('nobody')).resolves.toEqual([]);
      const all = (await sut.list()).map((t) => t.id);
      expect(all).toEqual([...all].sort((a, b) => a - b));
      expect(all).toHaveLength(await rows().count());
      expect(all).toEqual(expect.arrayContaining(issued));
    });
  });

  describe('authenticate', () => {
    it('gives the team, the token id and the scopes: read alone, or read and write', async () => {
      const reader = await sut.create({ team: 'auth', scope: 'read' });
      const writer = await sut.create({ team: 'auth' });
      await expect(sut.authenticate(reader.token)).resolves.toEqual({ tokenId: reader.record.id, team: 'auth', scopes: ['read'] });
      await expect(sut.authenticate(writer.token)).resolves.toEqual({ tokenId: writer.record.id, team: 'auth', scopes: ['read', 'write'] });
    });

    it('refuses a malformed token and a well-formed one never issued', async () => {
      const { token } = await sut.create({ team: 'auth' });
      const mistyped = token.slice(0, -1) + (token.endsWith('x') ? 'y' : 'x');
      await expect(sut.authenticate(mistyped)).resolves.toBeNull();
      await expect(sut.authenticate(generateToken())).resolves.toBeNull();
      await expect(sut.authenticate('')).resolves.toBeNull();
    });

    it.each([
      ['looked up for the first time at its expiry', false],
      ['cached before its expiry', true],
    ])('stops a token exactly at its expiry, %s', async (_, cachedBefore) => {
      at(T0);
      const { token, record } = await sut.create({ team: 'expiry', expiresInDays: 1 });
      if (cachedBefore) {
        at(T0 + DAY - 1);
        await expect(sut.authenticate(token)).resolves.toMatchObject({ tokenId: record.id });
      }
      at(T0 + DAY);
      await expect(sut.authenticate(token)).resolves.toBeNull();
      await expect(row(record.id)).resolves.toMatchObject({ expiresAt: new Date(T0 + DAY), revokedAt: null });
    });

    it('reads a token the cache does not hold once for all the requests that ask meanwhile, then from the cache', async () => {
      const { token, record } = await sut.create({ team: 'herd' });
      const reads = jest.spyOn(repository(), 'findOne');
      const callers = await Promise.all(Array.from({ length: 8 }, () => sut.authenticate(token)));
      expect(callers).toEqual(Array(8).fill({ tokenId: record.id, team: 'herd', scopes: ['read', 'write'] }));
      await expect(sut.authenticate(token)).resolves.toMatchObject({ tokenId: record.id });
      expect(reads).toHaveBeenCalledTimes(1);
      // An unknown token is read again each time (never cached), but also once for the requests that ask together.
      const unknown = generateToken();
      await expect(Promise.all([sut.authenticate(unknown), sut.authenticate(unknown)])).resolves.toEqual([null, null]);
      expect(reads).toHaveBeenCalledTimes(2);
      await expect(sut.authenticate(unknown)).resolves.toBeNull();
      expect(reads).toHaveBeenCalledTimes(3);
    });
  });

  describe('flushLastUsed', () => {
    it("writes each token's latest use once flushed, and nothing before", async () => {
      at(T0);
      const a = await sut.create({ team: 'usage' });
      const b = await sut.create({ team: 'usage' });
      await sut.authenticate(a.token);
      at(T0 + 1500);
      await sut.authenticate(a.token);
      await sut.authenticate(b.token);
      await expect(row(a.record.id)).resolves.toMatchObject({ lastUsedAt: null });

      await sut.flushLastUsed();
      await expect(row(a.record.id)).resolves.toMatchObject({ lastUsedAt: new Date(T0 + 1500) });
      await expect(row(b.record.id)).resolves.toMatchObject({ lastUsedAt: new Date(T0 + 1500) });
    });
  });

  describe('revoke', () => {
    it('marks the token revoked and stops it at once, though its look-up is cached', async () => {
      const { token, record } = await sut.create({ team: 'revoke' });
      await expect(sut.authenticate(token)).resolves.toMatchObject({ tokenId: record.id });

      const revoked = await sut.revoke(record.id);
      expect(revoked).toMatchObject({ id: record.id, team: 'revoke', revokedAt: expect.any(Date) });
      await expect(row(record.id)).resolves.toMatchObject({ revokedAt: revoked.revokedAt });
      await expect(sut.authenticate(token)).resolves.toBeNull();
    });

    it('stops the token for the requests after it though a read of its row was in flight', async () => {
      const { token, record } = await sut.create({ team: 'revoke' });
      // The read that is in flight when the revocation commits answers only after it (its row still valid).
      let revokedMeanwhile!: () => void;
      const revocation = new Promise<void>((resolve) => (revokedMeanwhile = resolve));
      let rowRead!: () => void;
      const read = new Promise<void>((resolve) => (rowRead = resolve));
      const findOne = repository().findOne.bind(repository());
      jest.spyOn(repository(), 'findOne').mockImplementationOnce(async (options) => {
        const found = await findOne(options);
        rowRead();
        await revocation;
        return found;
      });
      const inFlight = sut.authenticate(token);
      // The race is on only once the read has its row (still valid) and waits: it did run, through
      // the injected look-up (a look-up that went another way would leave this waiting, and the
      // test would fail on its timeout rather than pass without the race).
      await read;
      await sut.revoke(record.id);
      revokedMeanwhile();
      await expect(sut.authenticate(token)).resolves.toBeNull();
      await expect(inFlight).resolves.toMatchObject({ tokenId: record.id });
      // Nor is that read's answer kept for the requests after it.
      await expect(sut.authenticate(token)).resolves.toBeNull();
      await expect(row(record.id)).resolves.toMatchObject({ revokedAt: expect.any(Date) });
    });

    it('a revocation by another instance stops the token here once its cached look-up is TOKEN_CACHE_SECONDS old, not later', async () => {
      const { token, record } = await sut.create({ team: 'revoke' });
      // The cache's clock (performance.now(), read through the global object) is the test's: it is set, never waited for.
      let now = 1_000_000;
      jest.spyOn(performance, 'now').mockImplementation(() => now);
      /** The cache keeps its last reading of the clock for 1 ms (lru-cache's ttlResolution): past it, it reads the test's. */
      const settle = () => new Promise((resolve) => setTimeout(resolve, 5));
      await expect(sut.authenticate(token)).resolves.toMatchObject({ tokenId: record.id });
      // Another instance (or the command line) revokes it: this one learns of it only from the database.
      await rows().update(record.id, { revokedAt: new Date() });
      const reads = jest.spyOn(repository(), 'findOne');
      now += 5000;
      await settle();
      await expect(sut.authenticate(token)).resolves.toMatchObject({ tokenId: record.id });
      expect(reads).not.toHaveBeenCalled();
      now += 1;
      await settle();
      await expect(sut.authenticate(token)).resolves.toBeNull();
      expect(reads).toHaveBeenCalledTimes(1);
    });

    it('keeps the time of the first revocation when revoked again', async () => {
      const { record } = await sut.create({ team: 'revoke' });
      const first = await sut.revoke(record.id);
      const again = await sut.revoke(record.id);
      expect(again.revokedAt).toEqual(first.revokedAt);
      await expect(row(record.id)).resolves.toMatchObject({ revokedAt: first.revokedAt });
    });

    it('answers NotFoundException for an unknown id', async () => {
      await expect(sut.revoke(987_654)).rejects.toThrow(new NotFoundException('token 987654 not found'));
    });
  });

  describe('rotate', () => {
    it('issues a replacement with the same team, name and scope; the old token works until the grace period ends', async () => {
      at(T0);
      const old = await sut.create({ team: 'rotate', name: 'deploy bot', scope: 'read', expiresInDays: 30 });
      const { token, record, old: before } = await sut.rotate(old.record.id, HOUR);

      expect(record.id).toBeGreaterThan(old.record.id);
      expect(token).not.toBe(old.token);
      // The replacement gets the default lifetime, not the remainder of the old one.
      await expect(row(record.id)).resolves.toMatchObject({
        team: 'rotate',
        name: 'deploy bot',
        scope: 'read',
        expiresAt: new Date(T0 + 90 * DAY),
        revokedAt: null,
      });
      expect(before).toMatchObject({ id: old.record.id, expiresAt: new Date(T0 + HOUR) });
      await expect(row(old.record.id)).resolves.toMatchObject({ team: 'rotate', scope: 'read', expiresAt: new Date(T0 + HOUR), revokedAt: null });

      at(T0 + HOUR - 1);
      await expect(sut.authenticate(old.token)).resolves.toEqual({ tokenId: old.record.id, team: 'rotate', scopes: ['read'] });
      at(T0 + HOUR);
      await expect(sut.authenticate(old.token)).resolves.toBeNull();
      await expect(sut.authenticate(token)).resolves.toEqual({ tokenId: record.id, team: 'rotate', scopes: ['read'] });
    });

    it('with no grace period stops the old token at once, though its look-up is cached; the lifetime given applies to the replacement', async () => {
      at(T0);
      const old = await sut.create({ team: 'rotate' });
      await expect(sut.authenticate(old.token)).resolves.toMatchObject({ tokenId: old.record.id });

      const { record } = await sut.rotate(old.record.id, 0, 7);
      await expect(sut.authenticate(old.token)).resolves.toBeNull();
      await expect(row(old.record.id)).resolves.toMatchObject({ expiresAt: new Date(T0) });
      await expect(row(record.id)).resolves.toMatchObject({ team: 'rotate', name: null, scope: 'write', expiresAt: new Date(T0 + 7 * DAY) });
    });

    it('keeps an expiry that comes before the end of the grace period', async () => {
      at(T0);
      const old = await sut.create({ team: 'rotate', expiresInDays: 1 });
      at(T0 + DAY - 1);
      await expect(sut.rotate(old.record.id, 2)).resolves.toMatchObject({ old: { expiresAt: new Date(T0 + DAY) } });
      await expect(row(old.record.id)).resolves.toMatchObject({ expiresAt: new Date(T0 + DAY) });
    });

    it('of two concurrent rotates of one token, exactly one issues a replacement; the other gets ConflictException and writes nothing', async () => {
      for (let round = 0; round < 5; round++) {
        const old = await sut.create({ team: 'race' });
        const count = await rows().count();
        const results = await Promise.allSettled([sut.rotate(old.record.id, HOUR), sut.rotate(old.record.id, HOUR)]);
        const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
        expect(won).toHaveLength(1);
        expect(lost).toEqual([new ConflictException(`token ${old.record.id} was already rotated; its replacement is token ${won[0].record.id}`)]);
        await expect(rows().count()).resolves.toBe(count + 1);
        await expect(row(old.record.id)).resolves.toMatchObject({ replacedBy: won[0].record.id });
        await expect(rows().findOneBy({ tokenHash: hashToken(won[0].token) })).resolves.toMatchObject({ id: won[0].record.id, replacedBy: null });
      }
    });

    it('refuses to rotate a token a second time, naming its replacement; the replacement can be rotated', async () => {
      const old = await sut.create({ team: 'rotate' });
      const { record } = await sut.rotate(old.record.id, HOUR);
      const count = await rows().count();
      await expect(sut.rotate(old.record.id, HOUR)).rejects.toThrow(
        new ConflictException(`token ${old.record.id} was already rotated; its replacement is token ${record.id}`),
      );
      await expect(rows().count()).resolves.toBe(count);
      await expect(sut.rotate(record.id, HOUR)).resolves.toMatchObject({ old: { id: record.id, replacedBy: expect.any(Number) as number } });
    });

    it('refuses a token that expires exactly now, a revoked one, an unknown id and a bad lifetime, issuing nothing', async () => {
      at(T0);
      const expiring = await sut.create({ team: 'refused', expiresInDays: 1 });
      const revoked = await sut.create({ team: 'refused' });
      await sut.revoke(revoked.record.id);
      const count = await rows().count();
      at(T0 + DAY);

      await expect(sut.rotate(expiring.record.id, HOUR)).rejects.toThrow(`token ${expiring.record.id} has expired; issue a new one with tokens create`);
      await expect(sut.rotate(revoked.record.id, HOUR)).rejects.toThrow(`token ${revoked.record.id} is revoked; issue a new one with tokens create`);
      await expect(sut.rotate(987_654, HOUR)).rejects.toThrow(new NotFoundException('token 987654 not found'));
      // The lifetime is checked before the token is looked up.
      await expect(sut.rotate(987_654, HOUR, 0)).rejects.toThrow('expires-in-days must be a whole number from 1 to 3650');
      await expect(rows().count()).resolves.toBe(count);
      await expect(row(expiring.record.id)).resolves.toMatchObject({ expiresAt: new Date(T0 + DAY), revokedAt: null });
    });
  });
});
