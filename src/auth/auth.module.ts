import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminTokensController } from './admin-tokens.controller.js';
import { ApiToken } from './api-token.entity.js';
import { BearerStrategy } from './bearer.strategy.js';
import { OidcService } from './oidc.service.js';
import { RateLimitsService } from './rate-limits.service.js';
import { TokensService } from './tokens.service.js';

@Module({
  imports: [PassportModule, TypeOrmModule.forFeature([ApiToken])],
  controllers: [AdminTokensController],
  providers: [TokensService, OidcService, RateLimitsService, BearerStrategy],
  exports: [TokensService, RateLimitsService],
})
export class AuthModule {}
