import assert from 'node:assert/strict';
import { Connection } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { applyNamespaceRetention, namespaceRetentionMs } from '../../core/temporal/namespace-retention';
import { testStack } from '../../testkit/stack';

/** The stack sets its Temporal's namespace retention from TEMPORAL_NAMESPACE_RETENTION. */
describe('Temporal namespace retention', () => {
  const day = 86_400_000;

  async function retentionOf(address: string): Promise<number | undefined> {
    const connection = await Connection.connect({ address });
    try {
      const { config } = await connection.workflowService.describeNamespace({ namespace: 'default' });
      return optionalTsToMs(config?.workflowExecutionRetentionTtl);
    } finally {
      await connection.close();
    }
  }

  it('reads 7 days by default, a duration of at least a day when set, and refuses less', () => {
    assert.equal(namespaceRetentionMs({}), 7 * day);
    assert.equal(namespaceRetentionMs({ TEMPORAL_NAMESPACE_RETENTION: '30d' }), 30 * day);
    for (const bad of ['12h', 'soon', '0'])
      assert.throws(
        () => namespaceRetentionMs({ TEMPORAL_NAMESPACE_RETENTION: bad }),
        /TEMPORAL_NAMESPACE_RETENTION must be a duration of at least 1d/,
      );
  });

  it("sets the namespace's retention when it differs, and leaves it when it does not", async () => {
    const { temporalAddress } = await testStack();
    const before = await retentionOf(temporalAddress);
    try {
      const first = await applyNamespaceRetention(temporalAddress, 'default', 3 * day);
      assert.deepEqual(first, { fromMs: before, changed: before !== 3 * day });
      assert.equal(await retentionOf(temporalAddress), 3 * day);
      assert.deepEqual(await applyNamespaceRetention(temporalAddress, 'default', 3 * day), {
        fromMs: 3 * day,
        changed: false,
      });
    } finally {
      if (before !== undefined) await applyNamespaceRetention(temporalAddress, 'default', before);
    }
  });
});
