"""The in situ demo as an mpi4py simulation: a 3D heat diffusion whose temperature the dedicated
cores store in HDF5 and draw, every 10 iterations, as an image of its middle plane (the
<pyscript> examples/python/render_slice.py of examples/heat_insitu.xml).

    mpirun -np 4 python heat_insitu.py heat.xml [iterations] [steps per iteration]

(scripts/demo_insitu.sh runs it.) It computes what examples/heat_insitu.c computes, value for
value: the domain is split along x among the clients; each holds one ghost layer on both x
faces, exchanged with its neighbours at every step and declared in the layout, so that neither
the store nor the script sees it. The coordinates of the cells' corners (ghosts included),
written once, make it a rectilinear mesh for ParaView (examples/heat_paraview.xml)."""
import sys

import numpy as np
from mpi4py import MPI

import sidecore

NX, NY, NZ = 24, 32, 32  # per client, interior: the parameters of heat_insitu.xml


def initial_temperature(rank, clients):
    """Two hot spheres of the global domain at 100 degrees, on this client's slab (ghosts 0)."""
    t = np.zeros((NZ, NY, NX + 2))
    gx = float(NX * clients)
    z, y, x = np.meshgrid(np.arange(NZ, dtype=float), np.arange(NY, dtype=float),
                          rank * NX + np.arange(NX, dtype=float), indexing="ij")
    d1 = (x - gx * 0.3) ** 2 + (y - NY * 0.4) ** 2 + (z - NZ * 0.5) ** 2
    d2 = (x - gx * 0.7) ** 2 + (y - NY * 0.65) ** 2 + (z - NZ * 0.5) ** 2
    t[:, :, 1:NX + 1] = np.where((d1 < 36.0) | (d2 < 16.0), 100.0, 0.0)
    return t


def exchange_ghosts(comm, t, left, right):
    """This client's first and last interior x planes to its neighbours, theirs into the
    ghost planes (a domain face has no neighbour: its ghost plane is never read)."""
    received = np.empty((NZ, NY))
    comm.Sendrecv(np.ascontiguousarray(t[:, :, NX]), right, 0, received, left, 0)
    if left != MPI.PROC_NULL:
        t[:, :, 0] = received
    comm.Sendrecv(np.ascontiguousarray(t[:, :, 1]), left, 1, received, right, 1)
    if right != MPI.PROC_NULL:
        t[:, :, NX + 1] = received


def diffuse(t, out, first_client, last_client):
    """One explicit step into out: the outer faces of the global domain stay at 0."""
    c = t[1:-1, 1:-1, 1:-1]
    out[1:-1, 1:-1, 1:-1] = c + 0.12 * (t[:-2, 1:-1, 1:-1] + t[2:, 1:-1, 1:-1] +
                                        t[1:-1, :-2, 1:-1] + t[1:-1, 2:, 1:-1] +
                                        t[1:-1, 1:-1, :-2] + t[1:-1, 1:-1, 2:] - 6.0 * c)
    out[0], out[-1] = 0.0, 0.0
    out[:, 0], out[:, -1] = 0.0, 0.0
    if first_client:
        out[:, :, 1] = 0.0
    if last_client:
        out[:, :, NX] = 0.0


def simulate(sc, iterations, steps):
    comm = sc.client_comm  # the clients only: the dedicated cores are not part of it
    rank, clients = comm.Get_rank(), comm.Get_size()
    sc.parameter_set("CLIENTS", clients)
    sc.set_position("temperature", (0, 0, rank * NX))
    # The mesh: one unit per cell, this client's x from its first ghost to its last.
    sc.write("coord/x", np.arange(rank * NX - 1, rank * NX + NX + 2, dtype=np.float32))
    sc.write("coord/y", np.arange(NY + 1, dtype=np.float32))
    sc.write("coord/z", np.arange(NZ + 1, dtype=np.float32))
    t = initial_temperature(rank, clients)
    following = np.zeros_like(t)
    left = rank - 1 if rank > 0 else MPI.PROC_NULL
    right = rank + 1 if rank < clients - 1 else MPI.PROC_NULL
    for step in range(iterations * steps):
        exchange_ghosts(comm, t, left, right)
        diffuse(t, following, rank == 0, rank == clients - 1)
        t, following = following, t
        if (step + 1) % steps == 0:
            sc.write("temperature", t)  # one copy; the dedicated core takes it from here
            sc.end_iteration()


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: heat_insitu.py <xml> [iterations] [steps per iteration]")
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    with sidecore.initialize(sys.argv[1], MPI.COMM_WORLD) as sc:
        if sc.start():  # a dedicated core serves in here, then gets False
            simulate(sc, iterations, steps)


if __name__ == "__main__":
    main()
