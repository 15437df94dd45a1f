#!/bin/sh
# Prepares the data folder of a compose run (the `prepare` service of docker/compose.yaml):
#   - creates platforms/, workloads/ and out/$EXPERIMENT/ in it;
#   - copies the shipped platform and workload into it when it lacks them;
#   - converts workloads/NAME.swf or NAME.swf.gz into workloads/NAME.json when that is missing;
#   - removes the empty batsim_* files a failed Batsim run left in out/$EXPERIMENT/ (Batsim creates its
#     outputs when it starts: a run that aborts leaves them empty, and they are no results);
#   - fails with one clear line when an input is missing or out/$EXPERIMENT/ is not writable.
# It never overwrites a file of the data folder, and removes none but those empty batsim_* files.
# Every setting comes from the environment.
set -eu

data=${DATA:-/data}
share=${SCHED_SHARE:-/opt/scheduler}
platform=${PLATFORM:-sdsc_sp2.xml}
workload=${WORKLOAD:-sample.json}
experiment=${EXPERIMENT:-sample}
python=${PYTHON:-python}

fail() {
    echo "prepare: error: $*" >&2
    exit 1
}

mkdir -p "$data/platforms" "$data/workloads" "$data/out/$experiment" 2>/dev/null ||
    fail "cannot create folders in the data folder as user $(id -u):$(id -g);" \
         "set DATA_UID and DATA_GID to the owner of the host folder (see docs/docker.md)"

# provide KIND NAME: use data/KIND/NAME, or copy the shipped one; false if neither exists
provide() {
    if [ -e "$data/$1/$2" ]; then
        echo "prepare: using $1/$2 of the data folder"
    elif [ -e "$share/$1/$2" ]; then
        cp "$share/$1/$2" "$data/$1/$2"
        echo "prepare: copied the shipped $1/$2 into the data folder"
    else
        return 1
    fi
}

if ! provide platforms "$platform"; then
    shipped=$(for file in "$share"/platforms/*.xml; do printf '%s ' "${file##*/}"; done)
    fail "platforms/$platform is not in the data folder; the image ships: $shipped"
fi

if ! provide workloads "$workload"; then
    stem=${workload%.json}
    for trace in "$data/workloads/$stem.swf" "$data/workloads/$stem.swf.gz"; do
        if [ -e "$trace" ]; then
            echo "prepare: converting workloads/${trace##*/} into workloads/$workload"
            "$python" -m batsim_classifier_scheduler convert "$trace" -o "$data/workloads/$workload"
            break
        fi
    done
    [ -e "$data/workloads/$workload" ] ||
        fail "workloads/$workload is not in the data folder, nor an SWF trace $stem.swf(.gz) to convert"
fi

probe="$data/out/$experiment/.prepare-write-test"
if (: >"$probe") 2>/dev/null; then
    rm -f "$probe"
else
    fail "out/$experiment is not writable as user $(id -u):$(id -g);" \
         "set DATA_UID and DATA_GID to the owner of the host folder (see docs/docker.md)"
fi

for stale in "$data/out/$experiment"/batsim_*; do
    if [ -f "$stale" ] && [ ! -s "$stale" ]; then
        rm -f "$stale"
        echo "prepare: removed out/$experiment/${stale##*/}: empty, left by a Batsim run that failed"
    fi
done

echo "prepare: ready: platforms/$platform, workloads/$workload, results in out/$experiment/"
