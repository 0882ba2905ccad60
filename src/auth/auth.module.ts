import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TokensModule } from '../tokens/tokens.module.js';
import { BearerStrategy } from './bearer.strategy.js';
import { OidcService } from './oidc.service.js';
import { RateLimitsService } from './rate-limits.service.js';

/** Who is calling: the bearer strategy (the registry's tokens or SSO), and the rate limits per token. */
@Module({
  imports: [PassportModule, TokensModule],
  providers: [OidcService, RateLimitsService, BearerStrategy],
  exports: [RateLimitsService],
})
export class AuthModule {}
