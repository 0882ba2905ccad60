import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminTokensController } from './admin-tokens.controller.js';
import { ApiToken } from './api-token.entity.js';
import { TokensService } from './tokens.service.js';

/**
 * The token registry: issuing, listing, rotating and revoking tokens (the admin routes and the
 * `tokens` commands). Authentication (auth/) checks a bearer token through TokensService.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ApiToken])],
  controllers: [AdminTokensController],
  providers: [TokensService],
  exports: [TokensService],
})
export class TokensModule {}
