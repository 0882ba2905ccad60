import { Global, Module } from '@nestjs/common';
import { OutboxService } from './outbox.service.js';

/** Global: every feature that changes data writes its events into the outbox of its transaction. */
@Global()
@Module({ providers: [OutboxService], exports: [OutboxService] })
export class EventsModule {}
