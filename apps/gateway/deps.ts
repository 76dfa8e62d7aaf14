/** Everything the gateway is built from: exactly what its operations need. */
export type { OperationDeps as GatewayDeps } from '../../operations/deps';
