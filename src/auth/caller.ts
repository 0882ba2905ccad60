/** `read`: list plants and search stores; `write`: also create and delete plants (write includes read). */
export type TokenScope = 'read' | 'write';
export const TOKEN_SCOPES: readonly TokenScope[] = ['read', 'write'];

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
