import { PortcullisClient, tcpTransport, udpTransport } from '@portcullis/client/node';

const client = new PortcullisClient({ baseUrl: process.env.PORTCULLIS_URL ?? 'http://127.0.0.1:3000' });
const name = `pixel${process.pid}`; // a fresh player on every run

// 1. Sign up (201: logged in at once), then log in again by username: a JWT pair.
await client.signup({ email: `${name}@example.com`, username: name, password: 'correct horse battery' });
await client.loginWithUsername(name, 'correct horse battery');

// 2. An HTTP route behind @JwtShield, with the JWT access token as bearer.
const me = await (await client.authorizedFetch('/api/me')).json();
console.log('GET /api/me:', JSON.stringify(me));

// 3. Upgrade: the JWT is spent and exchanged for a session token pair.
const session = await client.upgrade();
console.log('session expires:', session.accessExpiration); // a Date

// 4. Connect and move over WebSocket, TCP and UDP with the session token.
const ws = await client.connect();
console.log('ws  move:', await ws.request('/game', 'move', { x: 1, y: 2 }));
const tcp = await client.connect({ transport: tcpTransport({ port: Number(process.env.TCP_PORT ?? 3001) }) });
console.log('tcp move:', await tcp.request('/game', 'move', { x: 3, y: 4 }));
const udp = await client.connect({ transport: udpTransport({ port: Number(process.env.UDP_PORT ?? 3002) }) });
console.log('udp move:', await udp.request('/game', 'move', { x: 5, y: 6 }));

// 5. Log out: the sockets close, the session and the login are revoked on the server.
await client.logout();
