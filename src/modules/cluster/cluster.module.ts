import { Global, Module } from '@nestjs/common';
import { ClusterService } from './cluster.service.js';

/** Cluster mode's node (DATABASE_URL and REDIS_URL): writer election and request forwarding. */
@Global()
@Module({ providers: [ClusterService], exports: [ClusterService] })
export class ClusterModule {}
