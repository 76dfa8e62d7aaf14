import { mochaHooks as suiteHooks } from '../support/hooks';
import { startCluster, type Cluster } from './support';

/**
 * One `npm run start:cluster` tree for the whole cluster suite, started before any test: the
 * reused contract suites find its Temporal and PostgreSQL through testkit's TEST_TEMPORAL_ADDRESS
 * and TEST_DATABASE_URL, set here before testkit starts anything.
 */
let cluster: Cluster | undefined;

export function theCluster(): Cluster {
  if (!cluster) throw new Error('the cluster is not started (test/cluster/hooks.ts runs first)');
  return cluster;
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(600_000);
    cluster = await startCluster();
    console.log(`      npm run start:cluster ready in ${cluster.startSeconds.toFixed(1)} s`);
    process.env.TEST_TEMPORAL_ADDRESS = cluster.temporalAddress;
    process.env.TEST_DATABASE_URL = cluster.adminUrl;
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(120_000);
    try {
      await suiteHooks.afterAll.call(this);
    } finally {
      await cluster?.stop();
    }
  },
};
