/**
 * The portal the transport benches serve at `/bench`: gate `open` (unshielded) and
 * `shielded` (@SessionShield), both answering their data.
 */
import 'reflect-metadata';
import { Gate, Portal, SessionShield } from '@portcullis/core';

export class BenchPortal {
  open(data) {
    return data;
  }

  shielded(data) {
    return data;
  }
}
// Plain JavaScript has no decorator syntax: apply them as TypeScript would.
const method = (name) => Object.getOwnPropertyDescriptor(BenchPortal.prototype, name);
Gate('open')(BenchPortal.prototype, 'open', method('open'));
Gate('shielded')(BenchPortal.prototype, 'shielded', method('shielded'));
SessionShield(BenchPortal.prototype, 'shielded', method('shielded'));
Portal('/bench')(BenchPortal);
