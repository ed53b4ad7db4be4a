import 'reflect-metadata';
const { RedisAccountStore } = await import('./packages/core/dist/account/redis-account-store.js');
const s = new RedisAccountStore({ url: 'redis://127.0.0.1', keyPrefix: 't', topology: 'cluster', nodes: [{host:'127.0.0.1', port: 17101}] });
await s.ready();
try { console.log(await s.create({ username: 'a', email: 'a@b.c', passwordHash: null })); } catch (e) { console.log('ERR', e, e.cause); }
await s.close();
