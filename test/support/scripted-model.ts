import type { ModelProvider, ModelReply, ModelRequest } from '../../core/model/types';

/**
 * A model the test steers: each call takes the next scripted reply; a reply may wait for the test
 * (`gate`) after streaming its first half, and stops when the activity is cancelled.
 */
export class ScriptedModel implements ModelProvider {
  readonly name = 'scripted';
  readonly calls: ModelRequest['messages'][] = [];
  /** Calls stopped by their abort signal. */
  aborted = 0;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  private holdFrom = 0;
  private holdAt: 'start' | 'half' = 'half';

  constructor(readonly replies: ModelReply[]) {}

  /** From the call after the next `skip` on, each reply waits after its first half for release(). */
  holdAfterFirstHalf(skip = 0): void {
    this.hold(skip, 'half');
  }

  /** As holdAfterFirstHalf, but each reply waits before it streams anything. */
  holdAtStart(skip = 0): void {
    this.hold(skip, 'start');
  }

  private hold(skip: number, at: 'start' | 'half'): void {
    this.holdFrom = this.calls.length + skip;
    this.holdAt = at;
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open?.();
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    this.calls.push(structuredClone(request.messages));
    const reply = this.replies.shift() ?? { text: 'done', toolCalls: [] };
    const half = this.holdAt === 'start' ? 0 : Math.ceil(reply.text.length / 2);
    if (half) request.onText(reply.text.slice(0, half));
    if (this.gate && this.calls.length > this.holdFrom) {
      const aborted = new Promise<never>((_, reject) =>
        request.signal.addEventListener(
          'abort',
          () => {
            this.aborted += 1;
            reject(new Error('cancelled'));
          },
          { once: true },
        ),
      );
      await Promise.race([this.gate, aborted]);
    }
    request.onText(reply.text.slice(half));
    return reply;
  }
}
