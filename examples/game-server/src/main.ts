/**
 * The example game server. Until the HTTP issue lands it only validates
 * configuration and applies the key guard, so `npm start` shows what it will use.
 */
import { consoleLoggerFactory, loadConfig, resolveSigningKey } from '@portcullis/core';

const config = loadConfig();
resolveSigningKey(config, consoleLoggerFactory.create('game-server'));
console.log('portcullis example: configuration is valid; the HTTP and socket servers arrive with their issues.');
