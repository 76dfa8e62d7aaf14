import type { GatewayDeps } from '../deps';
import type { RouteTable } from '../http/route-table';

export function registerRunsRoutes(_routes: RouteTable, _deps: GatewayDeps): void {}
