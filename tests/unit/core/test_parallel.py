"""A job's work in forked processes: the results in the work's order whatever the number of
processes, the first failing piece's exception as one loop would raise it, a dead worker named."""

import os

import pytest

from voirdire.parallel import WorkerFailed, in_processes


@pytest.mark.parametrize("processes", [1, 2, 3, 8])
def test_results_come_back_in_the_pieces_order_from_several_processes(processes):
    found = in_processes(lambda piece: (piece * piece, os.getpid()), list(range(11)), processes)
    assert [value for value, _ in found] == [piece * piece for piece in range(11)]
    assert len({pid for _, pid in found}) == min(processes, 11)
    assert found[0][1] == os.getpid()  # this process does a share too


def test_the_first_failing_piece_in_order_raises_its_own_exception():
    def piece(number):
        if number in (6, 3):  # of 0..8 in 3 processes: 3 and 6 in this one's share, 4 in a worker's
            raise ValueError(f"piece {number}")
        if number == 4:
            raise KeyError("later")
        return number

    with pytest.raises(ValueError, match="piece 3"):
        in_processes(piece, range(9), 3)
    with pytest.raises(KeyError, match="later"):
        in_processes(piece, [4, 5, 6, 7], 3)  # 4 is the first piece, in this process; 6 in a worker


def test_an_exception_that_does_not_pickle_comes_back_as_its_traceback():
    class Local(Exception):  # defined here: pickle cannot find it by name
        pass

    def piece(number):
        if number == 1:
            raise Local("not picklable")
        return number

    with pytest.raises(WorkerFailed, match="not picklable"):
        in_processes(piece, range(4), 2)


def test_a_worker_that_dies_is_named():
    def piece(number):
        if number == 1:
            os._exit(9)
        return number

    with pytest.raises(WorkerFailed, match="died"):
        in_processes(piece, range(4), 2)
