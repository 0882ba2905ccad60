/**
 * `read`: list plants and search stores; `write`: also create and delete plants (write includes read).
 * `admin`: manages the tokens of every team and the store list through /admin, and
 * nothing else: an admin token is refused (403) on the spec's operations, which belong to a team.
 */
export type TokenScope = 'read' | 'write' | 'admin';
export const TOKEN_SCOPES: readonly TokenScope[] = ['read', 'write', 'admin'];

/** What a token of each scope may do, as the guard checks it. */
export function scopesOf(scope: TokenScope): readonly TokenScope[] {
  if (scope === 'admin') return ['admin'];
  return scope === 'write' ? ['read', 'write'] : ['read'];
}

/** Who is calling: the token's team decides which plants are visible (contract §2). */
export interface Caller {
  /**
   * What names the credential in logs, never the credential itself: an opaque token's id,
   * or `oidc:` + the JWT's `jti` (its `sub` when it has no `jti`).
   */
  tokenId: number | string;
  team: string;
  scopes: readonly TokenScope[];
}
