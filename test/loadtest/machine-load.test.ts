import { describe, expect, it } from 'vitest';
import { formatMachineLoad, parseNetworkCounters } from '../../loadtest/lib/machine-load.js';

const SOFTNET = `082c136b 00000247 00000038 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
091ef2e2 00000010 0000002a 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000000 00000000
`;
const SNMP = `Ip: Forwarding DefaultTTL InReceives
Ip: 1 64 289382765
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors
Tcp: 1 200 120000 -1 1116735 1111650 4812 1865 0 289382765 289341654 28283 0 7047 0
Udp: InDatagrams NoPorts
Udp: 10 0
`;

describe("the load test's kernel network counters", () => {
  it('sums the input-backlog drops of every core (hex, second column) and reads TCP retransmissions by name', () => {
    expect(parseNetworkCounters(SOFTNET, SNMP)).toEqual({ backlogDrops: 0x247 + 0x10, retransmits: 28283 });
  });

  it('answers undefined when a file is missing or has no TCP counters, so reports leave the line out', () => {
    expect(parseNetworkCounters(undefined, SNMP)).toBeUndefined();
    expect(parseNetworkCounters(SOFTNET, 'Ip: a\nIp: 1\n')).toBeUndefined();
  });

  it('prints them on the machine line when measured, and leaves them out of reports saved before', () => {
    const load = { roles: { server: 0.7 }, oursCores: 0.7, interruptCores: 0.2, otherCores: 0, coreBusy: { 0: 0.5, 1: 0.8 } };
    expect(formatMachineLoad(load)).not.toContain('kernel');
    expect(formatMachineLoad({ ...load, kernel: { backlogDrops: 1204, retransmits: 71 } })).toContain('kernel: 1,204 packets dropped from a full input backlog, 71 TCP segments retransmitted');
  });
});
