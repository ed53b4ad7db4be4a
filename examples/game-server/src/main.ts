/**
 * `npm start`: the example game server. Reads PORT [3000], TCP_PORT [3001],
 * UDP_PORT [3002], HOST [127.0.0.1], UDP_REQUIRE_MAC [false], ADMIN_USERS (comma-separated usernames of
 * the admin accounts) and ADMIN_PASSWORD_HASH (the bcrypt hash of their password;
 * without it nobody is admin), plus the portcullis settings: this example's own
 * svc.config.json unless SVC_CONFIG names another file, and SVC__… variables,
 * which win. Prints where it listens.
 */
import { fileURLToPath } from 'node:url';
import { consoleLoggerFactory, describeError, loadConfig } from '@portcullis/core';
import { parseAdminUsers } from './admin-users.js';
import { createGameServer } from './game-server.js';
import { portFromEnv, realtimeAddressesFromEnv, startRealtime, udpRequireMacFromEnv } from './realtime.js';

const exampleConfig = fileURLToPath(new URL('../svc.config.json', import.meta.url));

try {
  const addresses = realtimeAddressesFromEnv(process.env);
  const udpRequireMac = udpRequireMacFromEnv(process.env);
  const server = await createGameServer({
    config: loadConfig({ env: { SVC_CONFIG: exampleConfig, ...process.env } }),
    port: portFromEnv('PORT', process.env.PORT, 3000),
    host: addresses.host,
    adminUsers: parseAdminUsers(process.env.ADMIN_USERS),
    adminPasswordHash: process.env.ADMIN_PASSWORD_HASH,
    loggers: consoleLoggerFactory,
  });
  const { http } = await server.listen();
  const realtime = await startRealtime(server.container, server.httpServer, addresses, { udpRequireMac });
  const { host, tcpPort, udpPort } = realtime.addresses;
  console.log(`portcullis example game server
  HTTP       ${http}  (POST /auth/signup, /auth/login/unamepwd, /auth/upgrade; GET /api/me)
  WebSocket  ${http.replace(/^http/, 'ws')}/ws
  TCP        ${host}:${tcpPort}
  UDP        ${host}:${udpPort}`);
  const stop = () => {
    realtime.close().then(() => server.close()).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`portcullis example: unclean shutdown: ${JSON.stringify(describeError(error))}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  console.error(`portcullis example: cannot start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
