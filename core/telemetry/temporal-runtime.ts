import type { MetricsExporterConfig } from '@temporalio/worker';

/**
 * The Temporal SDK runtime's own Prometheus exporter (its workers' pollers, slots, task latencies,
 * …), on a loopback port of its own: the worker's /metrics reads it and serves it after ours.
 * Names follow Prometheus conventions: seconds, and counters ending in `_total`.
 */
export function sdkMetricsExporter(port: number): { options: MetricsExporterConfig; url: string } {
  return {
    options: {
      prometheus: {
        bindAddress: `127.0.0.1:${port}`,
        countersTotalSuffix: true,
        unitSuffix: true,
        useSecondsForDurations: true,
      },
    },
    url: `http://127.0.0.1:${port}/metrics`,
  };
}
