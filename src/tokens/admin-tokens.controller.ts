import { Body, Controller, Delete, Get, HttpCode, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiBodyErrors, ApiCommonErrors } from '../common/api-errors.js';
import { adminHeaders } from '../common/api-headers.js';
import { AdminScope, CurrentCaller } from '../common/auth.decorators.js';
import type { Caller } from '../common/caller.js';
import { ErrorBody } from '../common/error-body.js';
import { nextPageLink } from '../common/next-page-link.js';
import {
  AdminTokenView,
  CreateTokenRequest,
  IssuedTokenView,
  ListTokensQuery,
  RotatedTokenView,
  RotateTokenRequest,
  tokenView,
} from './dto/admin-token.dto.js';
import { ParseTokenIdPipe } from './token-id.pipe.js';
import { TokensService } from './tokens.service.js';

const ID_PARAM = { name: 'id', description: "The token's id, as listed.", schema: { type: 'integer' as const, minimum: 1, example: 1 } };
const NOT_FOUND = { description: 'No token with this id.', type: ErrorBody, example: { error: 404, message: 'token 12 not found' } };

/**
 * Tokens of every team, for operators without a shell: the same TokensService as the
 * command line, so every rule and limit is written once. Each action is one audit line naming
 * the acting token and the target, never a token's text.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiCommonErrors()
@Controller('admin/tokens')
export class AdminTokensController {
  private readonly audit = new Logger('Audit');

  constructor(private readonly tokens: TokensService) {}

  @Post()
  @AdminScope('issuing tokens')
  @ApiBodyErrors()
  @ApiOperation({
    operationId: 'adminCreateToken',
    summary: 'Issue a token',
    description: 'Issues a token for a team. The token is in this answer only: the service keeps its digest.',
  })
  @ApiCreatedResponse({ description: 'Issued; `Location` is the new token.', type: IssuedTokenView, headers: adminHeaders('Location') })
  @ApiBadRequestResponse({
    description: 'The body is invalid: a field is missing, of the wrong type, out of bounds, or unknown.',
    type: ErrorBody,
    example: { error: 400, message: 'team must be a lowercase slug (letters, digits, inner hyphens, at most 63 characters)' },
  })
  async create(@CurrentCaller() caller: Caller, @Body() body: CreateTokenRequest, @Res({ passthrough: true }) res: Response): Promise<IssuedTokenView> {
    const { token, record } = await this.tokens.create({ team: body.team, name: body.name, expiresInDays: body.expires_in_days, scope: body.scope });
    this.audit.log({
      event: 'admin.token.created',
      team: caller.team,
      tokenId: caller.tokenId,
      target: { tokenId: record.id, team: record.team, scope: record.scope },
    });
    res.setHeader('Location', `/admin/tokens/${record.id}`);
    return { ...tokenView(record), token };
  }

  @Get()
  @AdminScope('listing tokens')
  @ApiOperation({
    operationId: 'adminListTokens',
    summary: 'List tokens',
    description: 'Tokens by id ascending, of every team or of one; never a token or its digest.',
  })
  @ApiOkResponse({ description: 'The tokens.', type: AdminTokenView, isArray: true, headers: adminHeaders('Link') })
  @ApiBadRequestResponse({
    description: 'A query parameter is invalid or unknown.',
    type: ErrorBody,
    example: { error: 400, message: 'limit must be an integer from 1 to 1000' },
  })
  async list(@Query() query: ListTokensQuery, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<AdminTokenView[]> {
    const { tokens, nextAfter } = await this.tokens.page(query);
    if (nextAfter !== undefined) {
      res.setHeader('Link', nextPageLink(req, '/admin/tokens', { limit: query.limit, after: nextAfter, team: query.team }));
    }
    return tokens.map(tokenView);
  }

  @Get(':id')
  @AdminScope('reading tokens')
  @ApiOperation({ operationId: 'adminGetToken', summary: 'Show a token', description: 'One token, without the token itself.' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ description: 'The token.', type: AdminTokenView })
  @ApiBadRequestResponse({
    description: 'The id is not a positive integer.',
    type: ErrorBody,
    example: { error: 400, message: 'token id must be a positive integer' },
  })
  @ApiNotFoundResponse(NOT_FOUND)
  async get(@Param('id', ParseTokenIdPipe) id: number): Promise<AdminTokenView> {
    return tokenView(await this.tokens.get(id));
  }

  @Delete(':id')
  @HttpCode(204)
  @AdminScope('revoking tokens')
  @ApiOperation({
    operationId: 'adminRevokeToken',
    summary: 'Revoke a token',
    description: `Revokes a token: it stops working in every instance within TOKEN_CACHE_SECONDS (at most 5 s). Revoking a revoked token changes nothing.`,
  })
  @ApiParam(ID_PARAM)
  @ApiNoContentResponse({ description: 'Revoked. No body.' })
  @ApiBadRequestResponse({
    description: 'The id is not a positive integer.',
    type: ErrorBody,
    example: { error: 400, message: 'token id must be a positive integer' },
  })
  @ApiNotFoundResponse(NOT_FOUND)
  async revoke(@CurrentCaller() caller: Caller, @Param('id', ParseTokenIdPipe) id: number): Promise<void> {
    const record = await this.tokens.revoke(id);
    this.audit.log({ event: 'admin.token.revoked', team: caller.team, tokenId: caller.tokenId, target: { tokenId: id, team: record.team } });
  }

  @Post(':id/rotate')
  @AdminScope('rotating tokens')
  @ApiBodyErrors()
  @ApiOperation({
    operationId: 'adminRotateToken',
    summary: 'Rotate a token',
    description:
      'Issues a replacement with the same team, name and scope, and lets the old token expire when the grace period ends. A token is rotated once: of two concurrent rotates, one succeeds and the other gets 409.',
  })
  @ApiParam(ID_PARAM)
  @ApiCreatedResponse({
    description: 'The replacement (the token itself, shown once) and the old token; `Location` is the replacement.',
    type: RotatedTokenView,
    headers: adminHeaders('Location'),
  })
  @ApiBadRequestResponse({
    description: 'The id or the body is invalid.',
    type: ErrorBody,
    example: { error: 400, message: 'grace_seconds must be an integer from 0 to 315360000' },
  })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({
    description: 'The token was already rotated (the message names its replacement), is revoked or has expired; nothing was issued.',
    type: ErrorBody,
    example: { error: 409, message: 'token 12 was already rotated; its replacement is token 13' },
  })
  async rotate(
    @CurrentCaller() caller: Caller,
    @Param('id', ParseTokenIdPipe) id: number,
    @Body() body: RotateTokenRequest,
    @Res({ passthrough: true }) res: Response,
  ): Promise<RotatedTokenView> {
    const { token, record, old } = await this.tokens.rotate(id, body.grace_seconds * 1000, body.expires_in_days);
    this.audit.log({
      event: 'admin.token.rotated',
      team: caller.team,
      tokenId: caller.tokenId,
      target: { tokenId: id, team: old.team, replacement: record.id },
    });
    res.setHeader('Location', `/admin/tokens/${record.id}`);
    return { ...tokenView(record), token, replaces: tokenView(old) };
  }
}
