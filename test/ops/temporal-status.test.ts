import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { permanentFailure } from '../../core/errors/failures';
import type { ModelReply } from '../../core/model/types';
import { TestLanguageModel, type TestModelRequest } from '../support/scripted-model';
import { testStack } from '../../testkit/stack';
import { runStatusSearchAttribute } from '../../workflows/search-attributes';
import { waitFor } from '../support/wait';
import { drawReply, startService, terminal, type Service, type Turn } from './support';

type Step = ModelReply | { fail: string } | { hold: true };

/** Each call takes the next step: a reply, a permanent failure, or a wait until cancelled. */
class StepModel extends TestLanguageModel {
  override readonly provider = 'steps';
  readonly steps: Step[] = [];
  async complete(request: TestModelRequest): Promise<ModelReply> {
    const step = this.steps.shift() ?? { text: 'done', toolCalls: [] };
    if ('fail' in step) throw permanentFailure('PROVIDER_ERROR', step.fail);
    if ('hold' in step) {
      request.onText('Thinking');
      return new Promise<never>((_, reject) =>
        request.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true }),
      );
    }
    request.onText(step.text);
    return step;
  }
}

/**
 * What an operator sees in the Temporal Web UI (the client's describe, and a visibility query on
 * the search attributes) tells each run's own status.
 */
describe('runs in Temporal’s terms', function () {
  this.timeout(120_000);
  const model = new StepModel();
  let service: Service;
  before(async () => {
    service = await startService({ model, config: { PLAN_APPROVAL_TIMEOUT: '60s' } });
  });
  after(() => service.close());

  const client = async () => (await testStack()).temporal.client;
  const describeRun = async (turn: Turn) => {
    const description = await (await client()).workflow.getHandle(turn.chatId).describe();
    return {
      status: description.status.name,
      runStatus: description.typedSearchAttributes.get(runStatusSearchAttribute),
    };
  };
  const failureOf = async (turn: Turn) => {
    const err = await (
      await client()
    ).workflow
      .getHandle(turn.chatId)
      .result()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof WorkflowFailedError, `the workflow failed: ${String(err)}`);
    assert.ok(err.cause instanceof ApplicationFailure, String(err.cause));
    return err.cause;
  };
  /** The workflow ids a visibility query lists (visibility catches up within moments). */
  const listed = (query: string, expected: string[]) =>
    waitFor(
      async () => {
        const ids: string[] = [];
        for await (const w of (await client()).workflow.list({ query })) ids.push(w.workflowId);
        return expected.every((id) => ids.includes(id)) ? ids : undefined;
      },
      { what: `${query} to list ${expected.join(', ')}`, timeoutMs: 20_000, intervalMs: 250 },
    );
  const run = async (steps: Step[], body: Record<string, unknown> = { text: 'hello' }) => {
    model.steps.splice(0, model.steps.length, ...steps);
    return service.send(body);
  };

  it('COMPLETE is Completed, with AgentRunStatus COMPLETE', async () => {
    const turn = await run([{ text: 'Hello there.', toolCalls: [] }]);
    assert.equal((await service.until(turn, terminal, 'the run')).status, 'COMPLETE');
    await (await client()).workflow.getHandle(turn.chatId).result();
    assert.deepEqual(await describeRun(turn), { status: 'COMPLETED', runStatus: 'COMPLETE' });
    await listed(`AgentRunStatus = 'COMPLETE' AND UserId = '${service.user.userId}'`, [turn.chatId]);
  });

  it('FAILED is Failed, its type the error code and its message the run’s error', async () => {
    const turn = await run([{ fail: 'The model refused.' }]);
    const ended = await service.until(turn, terminal, 'the run');
    assert.equal(ended.status, 'FAILED');
    const failure = await failureOf(turn);
    assert.equal(failure.type, 'PROVIDER_ERROR');
    assert.equal(failure.message, 'The model refused.');
    assert.deepEqual(await describeRun(turn), { status: 'FAILED', runStatus: 'FAILED' });
    // The operator's query for a user's failed runs.
    await listed(
      `WorkflowType = 'agentRunWorkflow' AND ExecutionStatus = 'Failed' AND UserId = '${service.user.userId}'`,
      [turn.chatId],
    );
  });

  it('a run cancelled through the API is Canceled, AgentRunStatus CANCELLED', async () => {
    const turn = await run([{ hold: true }]);
    await service.until(turn, (s) => s.status === 'RUNNING', 'the run to start');
    await service.cancel(turn);
    assert.equal((await service.until(turn, terminal, 'the run')).status, 'CANCELLED');
    await waitFor(async () => ((await describeRun(turn)).status === 'CANCELLED' ? true : undefined), {
      what: 'the execution to close',
    });
    assert.deepEqual(await describeRun(turn), { status: 'CANCELLED', runStatus: 'CANCELLED' });
  });

  it('a waiting run is found by AgentRunStatus WAITING, says so in its details, and a rejection fails it as PLAN_REJECTED', async () => {
    const turn = await run([drawReply()], { text: 'draw', planMode: true });
    await service.until(turn, (s) => s.status === 'WAITING', 'the plan');
    await listed(`AgentRunStatus = 'WAITING' AND UserId = '${service.user.userId}'`, [turn.chatId]);
    const metadata = (await (
      await client()
    ).workflow
      .getHandle(turn.chatId)
      .query('__temporal_workflow_metadata')) as { currentDetails?: string };
    assert.equal(metadata.currentDetails, 'waiting for plan approval');

    await service.decide(turn, false);
    assert.equal((await service.until(turn, terminal, 'the run')).status, 'CANCELLED');
    const failure = await failureOf(turn);
    assert.equal(failure.type, 'PLAN_REJECTED');
    assert.deepEqual(await describeRun(turn), { status: 'FAILED', runStatus: 'CANCELLED' });
  });
});
