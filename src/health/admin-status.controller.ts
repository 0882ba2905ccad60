import { Controller, Get, Inject } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiSchema, ApiTags } from '@nestjs/swagger';
import { ApiCommonErrors } from '../common/api-errors.js';
import { AdminScope } from '../common/auth.decorators.js';
import { eventsConfig } from '../events/events.config.js';
import { GEOCODER_ENGINES } from '../geo/geo.config.js';
import { OutboxService, type PlantEventsWay } from '../events/outbox.service.js';
import { AddressGeocoder } from '../geo/address-geocoder.js';
import { ROUTER_ENGINES } from '../geo/router.config.js';
import { Router } from '../geo/router.js';
import { StoreCatalog } from '../stores/store-catalog.js';
import { Readiness } from './readiness.js';

@ApiSchema({ name: 'AdminEventStreamFollower', description: "A copy of the stream other than the leader's, as the stream's leader sees it." })
export class EventStreamFollowerView {
  @ApiProperty({ description: 'The NATS server holding the copy.', example: 'nats-1' }) name: string;
  @ApiProperty({ description: 'Whether it has every event the leader has.', example: true }) current: boolean;
  @ApiProperty({ description: 'Whether the cluster considers it offline.', example: false }) offline: boolean;
  @ApiProperty({ description: 'Operations it is behind the leader.', type: 'integer', example: 0 }) lag: number;
  @ApiProperty({ description: 'Milliseconds since the leader last heard from it.', type: 'integer', example: 120 }) active_ms: number;
}

@ApiSchema({
  name: 'AdminEventStream',
  description: 'The JetStream stream as JetStream reports it (read when asked, or as last read when the broker does not answer).',
})
export class EventStreamView {
  @ApiProperty({ description: 'Copies of the stream (num_replicas).', type: 'integer', example: 3 }) replicas: number;
  @ApiProperty({ description: 'Events it holds.', type: 'integer', example: 1200 }) messages: number;
  @ApiProperty({ description: 'Bytes it holds.', type: 'integer', example: 640000 }) bytes: number;
  @ApiProperty({
    description: 'The server leading it; null on a single server, or while a cluster has no leader for it.',
    type: 'string',
    nullable: true,
    example: 'nats-0',
  })
  leader: string | null;
  @ApiProperty({ description: 'The other copies; empty on a single server.', type: [EventStreamFollowerView] }) followers: EventStreamFollowerView[];
}

@ApiSchema({ name: 'AdminChangeEvents', description: 'Whether change events are published, and how many wait.' })
export class ChangeEventsStatusView {
  @ApiProperty({ description: 'True when EVENTS_NATS_URL is set.', example: true }) enabled: boolean;
  @ApiProperty({ description: 'The JetStream stream (EVENTS_STREAM); null when off.', type: 'string', nullable: true, example: 'PLANTSTORE' }) stream:
    string | null;
  @ApiProperty({
    description: 'Events waiting in the outbox, of every instance; null when off or when the database does not answer.',
    type: 'integer',
    nullable: true,
    example: 0,
  })
  backlog: number | null;
  @ApiProperty({
    description:
      "Why this instance cannot publish to the stream at all (another stream's subjects overlap, the stream takes other subjects, the broker refused its settings); null when it can, when off, or when the broker is only unreachable (see backlog).",
    type: 'string',
    nullable: true,
    example: null,
  })
  stream_problem: string | null;
  @ApiProperty({
    description:
      "How this instance writes plants' events: `off` (change events off), `triggers` (the plants table's, MySQL/MariaDB), `statements` (the event's INSERT in each write's transaction: SQLite, or a server that would not let the migrations create the triggers); null on MySQL/MariaDB until the first look (the server's start-up). See docs/deployment.md, The database account.",
    enum: ['off', 'triggers', 'statements'],
    nullable: true,
    example: 'triggers',
  })
  plant_events: PlantEventsWay | null;
  @ApiPropertyOptional({ type: EventStreamView, description: 'The stream; absent when off, unusable, or never reached by this instance.' })
  stream_state?: EventStreamView;
}

@ApiSchema({ name: 'AdminGeocoder', description: 'The street-address geocoder (GEOCODER) of this instance. Readiness never depends on it.' })
export class GeocoderStatusView {
  @ApiProperty({
    description: 'The engine: off, postgis, census, nominatim or pelias.',
    enum: ['off', ...GEOCODER_ENGINES],
    example: 'postgis',
  })
  engine: string;
  @ApiProperty({
    description:
      'The circuit breaker: closed (in use), open (skipped after GEOCODER_BREAKER_FAILURES failures in a row), half_open (one request tries it again); null when off.',
    enum: ['closed', 'open', 'half_open'],
    nullable: true,
    example: 'closed',
  })
  breaker: string | null;
  @ApiProperty({ description: "Addresses in this instance's cache.", type: 'integer', example: 1234 }) cached: number;
}

@ApiSchema({ name: 'AdminRouter', description: 'The routing engine (ROUTER) of this instance, for travel_mode. Readiness never depends on it.' })
export class RouterStatusView {
  @ApiProperty({ description: 'The engine: off, pgrouting, osrm or valhalla.', enum: ['off', ...ROUTER_ENGINES], example: 'pgrouting' })
  engine: string;
  @ApiProperty({
    description:
      'The circuit breaker: closed (in use), open (skipped after ROUTER_BREAKER_FAILURES failures in a row), half_open (one search tries it again); null when off.',
    enum: ['closed', 'open', 'half_open'],
    nullable: true,
    example: 'closed',
  })
  breaker: string | null;
  @ApiProperty({
    description: "Travel times in this instance's cache: one per store and place a customer was moved to onto a road.",
    type: 'integer',
    example: 5678,
  })
  cached: number;
}

@ApiSchema({ name: 'AdminStatus', description: "The service as an operator's console shows it at a glance." })
export class AdminStatusView {
  @ApiProperty({ description: 'What GET /health/ready would say: true when this instance can serve.', example: true }) ready: boolean;
  @ApiProperty({ description: 'Why it is not ready (the 503 message of /health/ready); null when ready.', type: 'string', nullable: true, example: null })
  problem: string | null;
  @ApiProperty({ description: 'Stores in the catalogue; null when the database does not answer.', type: 'integer', nullable: true, example: 391 }) stores:
    number | null;
  @ApiProperty({
    description: 'The catalogue version, bumped by every import or store change; null when the database does not answer.',
    type: 'integer',
    nullable: true,
    example: 1,
  })
  catalog_version: number | null;
  @ApiProperty({ type: ChangeEventsStatusView }) change_events: ChangeEventsStatusView;
  @ApiProperty({ type: GeocoderStatusView }) geocoder: GeocoderStatusView;
  @ApiProperty({ type: RouterStatusView }) router: RouterStatusView;
}

/**
 * The status strip of the console as an API route any admin client can read: the
 * readiness of the probe, the catalogue's size and version, the change events' backlog.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiCommonErrors()
@Controller('admin/status')
export class AdminStatusController {
  private readonly stream: string;

  constructor(
    private readonly readiness: Readiness,
    private readonly catalog: StoreCatalog,
    private readonly outbox: OutboxService,
    private readonly geocoder: AddressGeocoder,
    private readonly router: Router,
    @Inject(eventsConfig.KEY) events: ConfigType<typeof eventsConfig>,
  ) {
    this.stream = events.EVENTS_STREAM;
  }

  @Get()
  @AdminScope('reading the status')
  @ApiOperation({
    operationId: 'adminGetStatus',
    summary: 'Show the status',
    description:
      'Readiness, store count and catalogue version, change events and their backlog, the geocoder and the router and their breakers. Answers 200 even when not ready.',
  })
  @ApiOkResponse({ description: 'The status.', type: AdminStatusView })
  async status(): Promise<AdminStatusView> {
    const problem = (await this.readiness.problem()) ?? null;
    const events = this.outbox.enabled;
    const [counts, stream, plantEvents] = await Promise.all([
      problem ? null : Promise.all([this.catalog.count(), this.catalog.version(), events ? this.outbox.waiting() : null]).catch(() => null),
      events ? this.outbox.streamStatus?.() : undefined,
      this.outbox.plantEventsWay(),
    ]);
    return {
      ready: problem === null,
      problem,
      stores: counts?.[0] ?? null,
      catalog_version: counts?.[1] ?? null,
      change_events: {
        enabled: events,
        stream: events ? this.stream : null,
        backlog: counts?.[2] ?? null,
        plant_events: plantEvents,
        stream_problem: stream?.problem ?? null,
        ...(stream?.state ? { stream_state: stream.state } : {}),
      },
      geocoder: this.geocoder.state(),
      router: this.router.state(),
    };
  }
}
