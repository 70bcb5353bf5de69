import os from 'node:os';

export interface MachineInfo {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly postgres: string;
  readonly database: string;
  /** 1-minute load average when the run started: other work on the machine skews the numbers. */
  readonly loadAverageAtStart: number;
}

export function describeMachine(postgresVersion: string, database: string, loadAverageAtStart: number): MachineInfo {
  return {
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    postgres: postgresVersion,
    database,
    loadAverageAtStart,
  };
}
