import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyKey } from './idempotency-key.entity.js';
import { IdempotentCreatesService } from './idempotent-creates.service.js';
import { Plant } from './plant.entity.js';
import { PlantsController } from './plants.controller.js';
import { PlantsService } from './plants.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([Plant, IdempotencyKey])],
  controllers: [PlantsController],
  providers: [PlantsService, IdempotentCreatesService],
})
export class PlantsModule {}
