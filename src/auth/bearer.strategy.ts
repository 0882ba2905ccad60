import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { Caller } from './caller.js';
import { TokensService } from './tokens.service.js';

export const REALM = 'plant-store';

@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly tokens: TokensService) {
    super({ realm: REALM });
  }

  async validate(token: string): Promise<Caller | false> {
    return (await this.tokens.authenticate(token)) ?? false;
  }
}
