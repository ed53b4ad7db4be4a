/**
 * Clients of the example game server (see game-server-harness.ts) that have signed
 * up a fresh account: the set-up most client tests start from.
 */
import { PortcullisClient, type LoginTokens, type PortcullisClientOptions } from '../../src/node.js';
import { newAccount, type RunningGameServer } from './game-server-harness.js';

/** The credentials of an account made by {@link newAccount}. */
export type Account = ReturnType<typeof newAccount>;

/** Reconnect spacing short enough for tests that drop or restart the server. */
export const FAST_RECONNECT = { initialDelayMs: 20, maxDelayMs: 200 } as const;

/** A client, the account it signed up and the login that signup answered. */
export interface SignedUpClient {
  readonly client: PortcullisClient;
  readonly account: Account;
  readonly login: LoginTokens;
}

/** A client of `server` (with `options` besides `baseUrl`) that has signed up `account`, a fresh one by default. */
export async function signedUpClient(
  server: RunningGameServer,
  options: Omit<PortcullisClientOptions, 'baseUrl'> = {},
  account: Account = newAccount(),
): Promise<SignedUpClient> {
  const client = new PortcullisClient({ ...options, baseUrl: server.baseUrl });
  const login = await client.signup(account);
  return { client, account, login };
}

/** A {@link SignedUpClient} whose `reauthenticate` hook counts its calls. */
export interface ReauthenticatingClient extends SignedUpClient {
  /** How many times the `reauthenticate` hook has been called so far. */
  reauthentications(): number;
}

/** How a `reauthenticate` hook logs `client` in again as `account`. */
export type Relogin = (client: PortcullisClient, account: Account) => Promise<unknown>;

/** The account is gone with an in-memory store, so logging in again means signing up again. */
const signUpAgain: Relogin = (client, account) => client.signup(account);

/** A signed-up client of `server` whose `reauthenticate` hook counts its calls and runs `relogin` (default: sign the same account up again). */
export async function reauthenticatingClient(server: RunningGameServer, relogin: Relogin = signUpAgain): Promise<ReauthenticatingClient> {
  const account = newAccount();
  let reauthentications = 0;
  const signedUp = await signedUpClient(server, {
    reauthenticate: async (client) => { reauthentications++; await relogin(client, account); },
  }, account);
  return { ...signedUp, reauthentications: () => reauthentications };
}
