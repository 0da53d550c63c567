"""Graph methods written in Python."""
import contextlib


@contextlib.contextmanager
def transaction(self):
    """A transaction: committed when the block ends, rolled back when it
    raises.  Readers see none of it until the commit."""
    self.begin()
    try:
        yield self
    except BaseException:
        if self.in_transaction:
            self.rollback()
        raise
    self.commit()


def enter(self):
    return self


def exit(self, *exc):
    self.close()
    return False
