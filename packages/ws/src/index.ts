/**
 * @portcullis/ws — the WebSocket transport: portals and gates over `ws`,
 * credential checked before the upgrade, shields checked by core per message.
 */
export { attachWebSocketTransport, WebSocketTransport } from './ws-transport.js';
export { WS_CLOSE } from '@portcullis/protocol';
export { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_WS_MAX_PAYLOAD, type WebSocketTransportOptions } from './ws-options.js';
