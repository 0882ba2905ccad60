import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { Caller } from '../common/caller.js';
import { TokensService } from '../tokens/tokens.service.js';
import { OidcService } from './oidc.service.js';

export const REALM = 'plant-store';

@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(
    private readonly tokens: TokensService,
    private readonly oidc: OidcService,
  ) {
    super({ realm: REALM });
  }

  /** An opaque `pst_` token, or (with OIDC_ISSUER set) a JWT of the issuer. */
  async validate(token: string): Promise<Caller | false> {
    const caller = this.oidc.accepts(token) ? await this.oidc.authenticate(token) : await this.tokens.authenticate(token);
    return caller ?? false;
  }
}
