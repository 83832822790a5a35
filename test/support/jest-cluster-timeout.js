// setupFilesAfterEnv of the `cluster` project (jest-passes.js): Jest ignores testTimeout inside a
// project entry, and the cluster suite's cases (three instances, a failover) need up to 3 minutes.
import { jest } from '@jest/globals';

jest.setTimeout(180_000);
