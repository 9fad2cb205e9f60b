/**
 * The reaper: a tiny parent every contained process runs under (docs/decisions/0090). It makes
 * itself a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`), starts the command, passes SIGTERM /
 * SIGINT / SIGHUP on to it (SIGUSR1 kills it: evalgate's hard stop, which must not kill the reaper
 * itself), and once the command has exited kills and reaps every process that is
 * left: a double-forked, `setsid` daemon that closed its stdio and cleared its environment is
 * re-parented to the reaper, not to init, so it cannot outlive the command. The reaper exits only
 * when it has no child left, with the command's status; evalgate sees the pipes close then.
 *
 * Perl because it is on every Debian and Ubuntu system (`perl-base` is essential) and can make the
 * system call Node cannot. The script loads no module: `use POSIX` alone cost ~8 ms of CPU on every
 * contained process, and `%!` loads Errno (docs/decisions/0172); the status arithmetic is spelled out. Inside a PID namespace (`unshare`) the reaper is the namespace's init,
 * where the subreaper call is not needed: orphans come to it anyway.
 */

/** The `prctl` system call's number, by Node's `process.arch`; 0 where unknown. */
export function prctlSyscall(arch: string = process.arch): number {
  switch (arch) {
    case "x64":
      return 157;
    case "arm64":
    case "riscv64":
    case "loong64":
      return 167;
    case "ia32":
    case "arm":
      return 172;
    default:
      return 0;
  }
}

/**
 * `perl -e REAPER_SCRIPT NR PARENT -- program args...`: NR is prctl's system call number, or 0 to skip
 * the subreaper call (as a PID namespace's init). PARENT, when not 0, is evalgate's pid: the reaper
 * asks for SIGUSR1 when its parent dies (PR_SET_PDEATHSIG), so a `kill -9` of evalgate makes it kill
 * everything under it and exit (docs/decisions/0188); a parent already gone means no command starts.
 */
export const REAPER_SCRIPT = String.raw`
use strict;
my $nr = shift @ARGV; my $parent = shift @ARGV; shift @ARGV if @ARGV && $ARGV[0] eq '--';
if ($nr) { syscall($nr, 36, 1, 0, 0, 0) == 0 or die "evalgate reaper: prctl: $!\n"; }
if ($nr && $parent) {
  syscall($nr, 1, 10, 0, 0, 0) == 0 or die "evalgate reaper: prctl: $!\n";
  exit 125 if getppid() != $parent;
}
my $pid = fork();
die "evalgate reaper: fork: $!\n" unless defined $pid;
if ($pid == 0) {
  $SIG{$_} = 'DEFAULT' for qw(TERM INT HUP USR1);
  exec { $ARGV[0] } @ARGV;
  print STDERR "$ARGV[0]: $!\n"; exit 127;
}
$SIG{$_} = sub { kill $_[0], $pid; } for qw(TERM INT HUP);
$SIG{USR1} = sub { kill 'KILL', $pid; };
my $status = 0;
# $! == 4: EINTR, the same number on every Linux architecture.
while (1) {
  my $w = waitpid(-1, 0);
  if ($w == $pid) { $status = $?; last; }
  if ($w == -1) { next if $! == 4; last; }
}
$SIG{$_} = 'IGNORE' for qw(TERM INT HUP USR1);
sub kids {
  my @k;
  if (open(my $f, '<', "/proc/$$/task/$$/children")) { local $/; my $s = <$f> // ''; close $f; return grep { /^\d+$/ } split /\s+/, $s; }
  opendir(my $d, '/proc') or return ();
  for my $e (readdir $d) {
    next unless $e =~ /^\d+$/;
    open(my $s, '<', "/proc/$e/stat") or next; my $l = <$s> // ''; close $s;
    $l =~ s/^.*\) //s; my @f = split / /, $l;
    push @k, $e if defined $f[1] && $f[1] == $$;
  }
  return @k;
}
while (1) {
  my @k = kids();
  kill 'KILL', @k if @k;
  my $w = waitpid(-1, 0);
  if ($w == -1) { next if $! == 4; last; }
}
if ($status & 127) { my $sig = $status & 127; $SIG{$_} = 'DEFAULT' for qw(TERM INT HUP); kill $sig, $$; exit(128 + $sig); }
exit($status >> 8);
`;

/** The reaper's command line around `argv`; with `parent`, it dies with that process (see above). */
export function reaperArgv(perl: string, syscallNr: number, argv: readonly string[], parent = 0): string[] {
  return [perl, "-e", REAPER_SCRIPT, String(syscallNr), String(parent), "--", ...argv];
}

/**
 * `perl -e DIES_WITH_PARENT NR PARENT -- program args...`: execs the program after asking for SIGKILL
 * when PARENT (evalgate) dies; for `unshare`, whose `--kill-child` then takes the whole PID
 * namespace along. A parent already gone means the program does not start.
 */
const DIES_WITH_PARENT = String.raw`
my $nr = shift @ARGV; my $parent = shift @ARGV; shift @ARGV if @ARGV && $ARGV[0] eq '--';
syscall($nr, 1, 9, 0, 0, 0) == 0 or die "evalgate: prctl: $!\n";
exit 125 if getppid() != $parent;
exec { $ARGV[0] } @ARGV; print STDERR "$ARGV[0]: $!\n"; exit 127;
`;

/** `argv` started so that it is killed when `parent` dies. */
export function diesWithParentArgv(
  perl: string,
  syscallNr: number,
  argv: readonly string[],
  parent: number,
): string[] {
  return [perl, "-e", DIES_WITH_PARENT, String(syscallNr), String(parent), "--", ...argv];
}
