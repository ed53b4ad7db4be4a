import { PortcullisClient } from '@portcullis/client/node';

const client = new PortcullisClient({ baseUrl: process.env.PORTCULLIS_URL ?? 'http://127.0.0.1:3000' });

const guest = await client.connect({ credential: 'none' }); // WebSocket /ws without a credential
console.log('ping as guest:', await guest.request('/game', 'ping'));
console.log('move as guest:', await guest.request('/game', 'move', { x: 1, y: 2 }).catch((error) => error.code));

const name = `ada${process.pid}`; // a fresh player on every run
await client.signup({ email: `${name}@example.com`, username: name, password: 'correct horse battery' });
const player = await client.connect(); // upgrades the JWT to a session token, then WebSocket /ws
console.log('move as player:', await player.request('/game', 'move', { x: 3, y: 4 }));

await client.logout(); // closes both sockets, revokes the session and the login
