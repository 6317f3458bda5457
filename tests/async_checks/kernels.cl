// Kernels for tests/async_checks.rs: each misuse of async_work_group_copy or
// wait_group_events, and beside it a correct twin (NAME_ok) that must report nothing.
// Groups of 8 work-items; `in` holds 0, 1, 2, ...

// The last work-item of each group asks for one element instead of eight.
kernel void copy_count(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0), n = get_local_size(0);
  if (l == n - 1)
    n = 1;
  event_t e = async_work_group_copy(tile, in + get_group_id(0) * 8, n, 0);
  wait_group_events(1, &e);
  out[get_global_id(0)] = tile[l];
}

kernel void copy_count_ok(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  event_t e = async_work_group_copy(tile, in + get_group_id(0) * 8, get_local_size(0), 0);
  wait_group_events(1, &e);
  out[get_global_id(0)] = tile[l];
}

// Each work-item names its own source.
kernel void copy_src(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  event_t e = async_work_group_copy(tile, in + l, 8, 0);
  wait_group_events(1, &e);
  out[get_global_id(0)] = tile[l];
}

// Only the first half of the group reaches the copy; the others wait on event 0.
kernel void copy_reach(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  event_t e = 0;
  if (l < 4)
    e = async_work_group_copy(tile, in, 8, 0);
  wait_group_events(1, &e);
  out[get_global_id(0)] = tile[l];
}

kernel void copy_reach_ok(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  event_t e = 0;
  if (get_local_size(0) == 8)
    e = async_work_group_copy(tile, in, 8, 0);
  wait_group_events(1, &e);
  out[get_global_id(0)] = tile[l];
}

// A strided gather whose stride differs in work-item 5.
kernel void strided(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  size_t stride = l == 5 ? 1 : 2;
  event_t e = async_work_group_strided_copy(tile, in, 8, stride, 0);
  wait_group_events(1, &e);
  out[get_global_id(0)] = tile[l];
}

kernel void strided_ok(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  event_t e = async_work_group_strided_copy(tile, in, 8, 2, 0);
  wait_group_events(1, &e);
  out[get_global_id(0)] = tile[l];
}

// Two copies; each work-item waits for one of them only (by its parity).
kernel void wait_events(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  event_t events[2];
  events[0] = async_work_group_copy(tile, in, 4, 0);
  events[1] = async_work_group_copy(tile + 4, in + 4, 4, 0);
  wait_group_events(1, events + (l & 1));
  out[get_global_id(0)] = tile[l];
}

kernel void wait_events_ok(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  event_t events[2];
  events[0] = async_work_group_copy(tile, in, 4, 0);
  events[1] = async_work_group_copy(tile + 4, in + 4, 4, 0);
  wait_group_events(2, events);
  out[get_global_id(0)] = tile[l];
}

// The copy is made by everyone; only work-item 0 waits for it (the rest return).
kernel void wait_reach(global const int *in, global int *out) {
  local int tile[8];
  event_t e = async_work_group_copy(tile, in, 8, 0);
  if (get_local_id(0) != 0)
    return;
  wait_group_events(1, &e);
  out[get_group_id(0)] = tile[0];
}

// The copy's event is never waited for.
kernel void unwaited(global const int *in, global int *out) {
  local int tile[8];
  event_t e = async_work_group_copy(tile, in, 8, 0);
  out[get_global_id(0)] = in[get_global_id(0)] + 1;
}

kernel void unwaited_ok(global const int *in, global int *out) {
  local int tile[8];
  event_t e = async_work_group_copy(tile, in, 8, 0);
  wait_group_events(1, &e);
  out[get_global_id(0)] = in[get_global_id(0)] + 1;
}

// A wait on an event no copy returned.
kernel void invalid_event(global const int *in, global int *out) {
  event_t e = 0;
  wait_group_events(1, &e);
  out[get_global_id(0)] = in[get_global_id(0)];
}

// A second wait on an event the first wait already completed.
kernel void wait_twice(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  event_t e = async_work_group_copy(tile, in, 8, 0);
  wait_group_events(1, &e);
  out[get_global_id(0)] = tile[l];
  wait_group_events(1, &e);
}

// Copies chained onto one event in a loop, one wait for all of them.
kernel void chained_ok(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  event_t e = 0;
  for (int j = 0; j < 8; j++)
    e = async_work_group_copy(tile + j, in + j, 1, e);
  wait_group_events(1, &e);
  out[get_global_id(0)] = tile[l];
}

// The same loop, where work-item 2 asks for another element in round 2.
kernel void chained_loop(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  event_t e = 0;
  for (int j = 0; j < 8; j++) {
    int offset = (l == 2 && j == 2) ? 0 : j;
    e = async_work_group_copy(tile + offset, in + offset, 1, e);
  }
  wait_group_events(1, &e);
  out[get_global_id(0)] = tile[l];
}

// Local results copied back to global memory with async_work_group_copy.
kernel void copy_out_ok(global const int *in, global int *out) {
  local int tile[8];
  size_t l = get_local_id(0);
  tile[l] = in[get_global_id(0)] * 2;
  barrier(CLK_LOCAL_MEM_FENCE);
  event_t e = async_work_group_copy(out + get_group_id(0) * 8, tile, 8, 0);
  wait_group_events(1, &e);
}
