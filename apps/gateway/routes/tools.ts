import type { GatewayDeps } from '../deps';
import type { RouteTable } from '../http/route-table';

export function registerToolsRoutes(_routes: RouteTable, _deps: GatewayDeps): void {}
