import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { listeningSockets, socketInodesOf, type ListeningSocket } from '../../apps/stack/process/procfs';
import {
  killTree,
  processTree,
  removeSettings,
  stackSettings,
  startReady,
  type Stack,
  type StackSettings,
} from './support';

const isLoopback = (address: string) =>
  address === '::1' || (isIP(address) === 4 && address.startsWith('127.'));

/** The TCP sockets the stack's processes listen on, found by their inodes in /proc. */
async function listenersOf(stack: Stack): Promise<(ListeningSocket & { command: string })[]> {
  const tree = await processTree(stack.pid);
  const sockets = await listeningSockets();
  const found: (ListeningSocket & { command: string })[] = [];
  for (const process of tree) {
    const held = await socketInodesOf(process.pid);
    for (const socket of sockets)
      if (held.has(socket.inode)) found.push({ ...socket, command: process.command });
  }
  return found;
}

const shown = (sockets: { address: string; port: number; command: string }[]) =>
  sockets.map((s) => `\n        ${s.address}:${s.port} (${s.command.slice(0, 60)})`).join('');

// Open sign-up, plain-http webhooks and private URLs are on in `npm start`: the issue-17 rule is
// that it listens on loopback unless HOST says otherwise. The sockets are the kernel's own record.
describe('npm start: the addresses it listens on (the real process tree)', function () {
  let stack: Stack | undefined;
  let settings: StackSettings | undefined;
  afterEach(async () => {
    if (stack?.running()) await killTree(stack);
    if (settings) await removeSettings(settings);
    stack = settings = undefined;
  });

  /** Starts `npm start` with HOST as given; checks the gateway's one socket is on `expected`. */
  async function listeningWith(host: string | undefined, expected: string, env: Record<string, string> = {}) {
    settings = await stackSettings({ HOST: host, ...env });
    stack = await startReady(settings);
    const sockets = await listenersOf(stack);
    const gateway = sockets.filter((s) => s.port === settings?.ports.gateway);
    assert.deepEqual(
      gateway.map((s) => s.address),
      [expected],
      `the gateway's listening sockets:${shown(sockets)}`,
    );
    return sockets;
  }

  it('listens on loopback only when HOST is not set', async () => {
    const sockets = await listeningWith(undefined, '127.0.0.1');
    const exposed = sockets.filter((s) => !isLoopback(s.address));
    assert.deepEqual(exposed, [], `listening beyond loopback:${shown(exposed)}`);
    console.log(`      ${sockets.length} listening sockets, all on loopback:${shown(sockets)}`);
  });

  it('listens on every interface only when HOST=0.0.0.0 says so, the operator ports still on loopback', async () => {
    const sockets = await listeningWith('0.0.0.0', '0.0.0.0');
    // Without METRICS_TOKEN, metrics and the workers' details stay on this host (issue 45).
    const exposed = sockets.filter((s) => !isLoopback(s.address) && s.port !== settings?.ports.gateway);
    assert.deepEqual(exposed, [], `listening beyond loopback besides the gateway:${shown(exposed)}`);
    console.log(`      ${sockets.length} listening sockets:${shown(sockets)}`);
  });

  it('opens the operator ports to every interface with HOST=0.0.0.0 and METRICS_TOKEN, behind the token', async () => {
    const token = 'metrics-token-0123456789';
    const sockets = await listeningWith('0.0.0.0', '0.0.0.0', { METRICS_TOKEN: token });
    const operator = sockets.filter((s) => !isLoopback(s.address) && s.port !== settings?.ports.gateway);
    // The gateway's METRICS_PORT and the worker's WORKER_HTTP_PORT.
    assert.equal(operator.length, 2, `the operator ports:${shown(sockets)}`);
    for (const { port } of operator) {
      assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 401);
      const scraped = await fetch(`http://127.0.0.1:${port}/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(scraped.status, 200);
    }
  });
});
