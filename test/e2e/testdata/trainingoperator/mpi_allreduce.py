"""An MPI allreduce with mpi4py: every rank adds rank+1; all must agree.

Rank 0 prints every rank's line, gathered over MPI: ranks printing on
their own share mpirun's output and may split each other's lines.
"""
import os

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank + 1, op=MPI.SUM)
hostfile = os.path.basename(os.environ["OMPI_MCA_orte_default_hostfile"])
lines = comm.gather(f"rank {rank}/{size}: allreduce = {total} hostfile={hostfile}", root=0)
if rank == 0:
    print("\n".join(lines), flush=True)
if total != size * (size + 1) // 2:
    raise SystemExit(f"allreduce gave {total}, want {size * (size + 1) // 2}")
