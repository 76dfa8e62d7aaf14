/**
 * The MCP row: `send_message` over MCP (one stateless POST /mcp, the SDK's client) against the
 * REST send it wraps (`POST /api/v1/completions`), both on a task queue no worker polls, on the
 * same gateway, in the same mode (SEND_START_WAIT=off, as every gateway of the bench). What it
 * measures is MCP's own cost: the JSON-RPC framing, the per-request server and the SDK client's
 * work on the answer. The gateway runs in its own process, as it does for every client: in the
 * bench's process the SDK client's parsing would hold up the gateway's event loop, a cost no
 * client on another machine imposes.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startIdleGatewayProcess, type Bench } from './context';
import { serviceClient } from './client';
import { measure, measurePair, repeat } from './measure';
import { latencyRow, type Row } from './report';

const BOUND = { p50: 1.2, p99: 1.5 };

export async function mcpRows(
  bench: Bench,
  samples: { seq: number; conc: number; rounds: number },
): Promise<Row[]> {
  const { user } = bench;
  const gateway = await startIdleGatewayProcess(bench);
  const rest = serviceClient(gateway.url, user);
  const mcp = new Client({ name: 'bench', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } },
    }),
  );
  const restSend = () => rest.send({ text: 'hello bench' });
  const mcpSend = async () => {
    const result = await mcp.callTool({ name: 'send_message', arguments: { text: 'hello bench' } });
    if (result.isError) throw new Error(JSON.stringify(result.structuredContent));
  };
  try {
    console.log('bench: mcp warm-up…');
    await measure(mcpSend, 50, 4);
    await measure(restSend, 50, 4);
    const rows: Row[] = [];
    for (const [name, n, concurrency] of [
      ['mcp send_message seq', samples.seq, 1],
      ['mcp send_message c16', samples.conc, 16],
    ] as const) {
      console.log(`bench: ${name}, ${n} at ${concurrency} in flight, ${samples.rounds} rounds…`);
      const rounds = await repeat(samples.rounds, () => measurePair(mcpSend, restSend, n, concurrency));
      rows.push(latencyRow('mcp', name, rounds, BOUND));
    }
    return rows;
  } finally {
    await mcp.close();
    await gateway.process.stop();
  }
}
