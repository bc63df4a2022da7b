// Owns the shape of a fault of a world's own process: a server world's child
// crashing, hanging, writing garbage on stdout, failing to spawn or leaving
// processes behind. The child's transport reports them, a connection passes
// them up, the runner stamps the model turn, and the world's session says how
// the record shows them.

export type ServerFaultKind = 'crashed' | 'hung' | 'garbage_output' | 'spawn_failed' | 'leftover_processes';

/** A world's own process misbehaving (crash, hang, garbage on stdout, processes left behind): only a world that runs one reports these. */
export interface ServerFault {
  kind: ServerFaultKind;
  detail: string;
}

/** A server fault with the model turn it happened in. */
export type RecordedServerFault = ServerFault & { step: number };
