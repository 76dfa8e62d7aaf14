import type { GatewayDeps } from '../deps';
import type { RouteTable } from '../http/route-table';

export function registerChatsRoutes(_routes: RouteTable, _deps: GatewayDeps): void {}
